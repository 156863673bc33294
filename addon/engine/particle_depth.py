"""The particle layer's depth: the nearest particle's view depth in every pixel.

The render integration (``addon/output/render_layer.py``) hands it to Blender's
compositor beside the particle light, which compares it with the render's own
depth pass: light shows where the nearest particle is in front of the scene.
One dispatch per effect over its slots (``particle_depth.glsl``), an atomic
min on the float bits into an R32UI image cleared to :data:`FAR`.
"""

from __future__ import annotations

import numpy as np

from .compositing import SPLAT_CONSTANTS, Camera
from .kernels import Constant, Image, Kernel
from .look import particle_values
from .simulation import LAYOUTS

# Depth where no particle is: beyond Blender's own "nothing hit" depth (1e10).  2^34's bit pattern is
# also a whole float32, which matters: Blender's texture clear carries its value through a float.
FAR = float(2**34)
FAR_BITS = int(np.float32(FAR).view(np.uint32))
MAX_FOOTPRINT = 8  # pixels each side a wide particle marks at most

PARTICLE_DEPTH_KERNELS = {
    name: Kernel(
        "particle_depth",
        images=(*layout.images("READ"), Image("particle_depth", "R32UI", atomic=True), Image("look", "RGBA32F", "READ")),
        constants=(*SPLAT_CONSTANTS, Constant("VEC4", "view_depth", components=(
            ("view_axis", "xyz"), ("view_offset", "w")))),  # world position to depth along the camera axis
        includes=("common.glsl", "random.glsl", "look.glsl", "particle_look.glsl", "particle_read.glsl"),
        defines=(("MAX_FOOTPRINT", str(MAX_FOOTPRINT)),),
    )
    for name, layout in LAYOUTS.items()
}


def view_depth_row(world_to_view: np.ndarray) -> np.ndarray:
    """The plane whose dot with a world position is its depth along the camera axis (Blender's -Z forward)."""
    return -np.asarray(world_to_view, np.float64)[2]


class ParticleDepth:
    """The nearest-particle depth image of a target, filled effect by effect."""

    def __init__(self, host, width: int, height: int):
        self.host = host
        self.width, self.height = width, height
        self.image = host.texture("particle_depth", width, height, "R32UI")

    def clear(self) -> None:
        self.host.clear(self.image, FAR_BITS)

    def add(self, system, camera: Camera, world_to_view: np.ndarray, look) -> None:
        """Every live particle of ``system`` (a ParticleSystem or CSG cloud), with its look table ``look``."""
        groups_x, rows, _ = system.groups
        self.host.dispatch(
            PARTICLE_DEPTH_KERNELS[system.layout.name], (groups_x, rows, 1),
            {**system.textures, "particle_depth": self.image, "look": look},
            {
                "count": system.count,
                "target_size": (self.width, self.height),
                "view_proj": camera.view_proj,
                **particle_values(system),
                "quantize": (0.0, 0.0, 0.0, camera.pixels_per_unit),
                "view_depth": view_depth_row(world_to_view),
            },
        )

    def read(self) -> np.ndarray:
        """Depth in scene units (height, width), rows bottom to top; FAR where no particle is."""
        return self.host.read(self.image).reshape(self.height, self.width).view(np.float32).copy()
