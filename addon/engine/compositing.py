"""Atomic compositing: particles splatted into integer images, resolved to float.

See ``shaders/color_pack.glsl`` for the R21G22B21 packing in two uint32.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .kernels import Constant, Image, Kernel
from .look import LOOK_SIZE, look_table
from .settings import RenderSettings
from .simulation import LAYOUTS, ParticleSystem

# Integer range of each packed channel: R and B have 21 bits, G has 22.
CHANNEL_MAX = np.array([(1 << 21) - 1, (1 << 22) - 1, (1 << 21) - 1], dtype=np.float64)

ACCUM_IMAGES = (
    Image("accum_hi", "R32UI", atomic=True),
    Image("accum_lo", "R32UI", atomic=True),
)


def _splat_kernel(layout) -> Kernel:
    return Kernel(
        "splat",
        images=(*layout.images("READ"), *ACCUM_IMAGES, Image("stats", "R32UI", atomic=True),
                Image("look", "RGBA32F", "READ")),
        constants=(
            Constant("INT", "count"),
            Constant("IVEC2", "target_size"),
            Constant("MAT4", "view_proj"),
            Constant("VEC4", "color_start"),  # rgb, w: emission strength
            Constant("VEC4", "color_end"),  # rgb, w: world radius
            Constant("VEC4", "quantize"),  # xyz: Imax / Emax per channel, w: pixels per unit at w=1
            Constant("VEC4", "state_origin"),  # xyz: what stored positions are relative to (simulation.py)
            Constant("VEC4", "look_random"),  # x: color (brightness) variation, y: size variation
            Constant("INT", "look_seed"),
        ),
        includes=("common.glsl", "color_pack.glsl", "random.glsl", "look.glsl"),
    )


SPLAT_KERNELS = {name: _splat_kernel(layout) for name, layout in LAYOUTS.items()}
SPLAT = SPLAT_KERNELS["FULL"]

# The same splat reading through the compaction (compaction.py): only live slots.
SPLAT_LIVE_KERNELS = {
    name: replace(
        kernel,
        images=(*kernel.images, Image("live_index", "R32UI", "READ"), Image("live_count", "R32UI", "READ")),
        defines=(("LIVE_INDEX", "1"),),
    )
    for name, kernel in SPLAT_KERNELS.items()
}
SPLAT_LIVE = SPLAT_LIVE_KERNELS["FULL"]

RESOLVE = Kernel(
    "resolve",
    images=(*ACCUM_IMAGES, Image("frame", "RGBA32F", "WRITE")),
    constants=(
        Constant("IVEC2", "target_size"),
        Constant("VEC4", "dequantize"),  # xyz: Emax / Imax per channel
    ),
    local_size=(16, 16, 1),
    includes=("common.glsl", "color_pack.glsl"),
)


@dataclass(frozen=True)
class Camera:
    """What the splat needs from a camera: world to clip, and pixels per unit at w = 1."""

    view_proj: np.ndarray  # 4x4, row-major, OpenGL clip conventions
    width: int
    height: int

    @property
    def pixels_per_unit(self) -> float:
        """Projected size scale: a radius r at clip w covers r * this / w pixels."""
        return float(np.linalg.norm(self.view_proj[1, :3])) * self.height / 2


def perspective(fov_y: float, aspect: float, near: float, far: float) -> np.ndarray:
    f = 1.0 / math.tan(fov_y / 2)
    return np.array(
        [[f / aspect, 0, 0, 0], [0, f, 0, 0],
         [0, 0, (far + near) / (near - far), 2 * far * near / (near - far)], [0, 0, -1, 0]],
        dtype=np.float64,
    )


def look_at(eye, target, up=(0.0, 0.0, 1.0)) -> np.ndarray:
    """World to view matrix of a camera at ``eye`` looking at ``target`` (Blender's -Z forward)."""
    eye, target, up = (np.asarray(v, dtype=np.float64) for v in (eye, target, up))
    forward = target - eye
    forward /= np.linalg.norm(forward)
    right = np.cross(forward, up)
    right /= np.linalg.norm(right)
    true_up = np.cross(right, forward)
    view = np.identity(4)
    view[0, :3], view[1, :3], view[2, :3] = right, true_up, -forward
    view[:3, 3] = -view[:3, :3] @ eye
    return view



def quantize_scale(emax: float) -> np.ndarray:
    """Imax / Emax per channel, as float32 (what the kernel multiplies by)."""
    return (CHANNEL_MAX / emax).astype(np.float32)


def dequantize_scale(emax: float) -> np.ndarray:
    return (emax / CHANNEL_MAX).astype(np.float32)


class Compositor:
    """The atomic splat target: two R32UI accumulation images and a float frame."""

    def __init__(self, host, width: int, height: int, render: RenderSettings):
        if width > host.max_texture_size or height > host.max_texture_size:
            raise ValueError(f"resolution {width}x{height} is beyond this GPU's texture limit of {host.max_texture_size}")
        self.host = host
        self.width, self.height = width, height
        self.render = render
        self.accum_hi = host.texture("accum_hi", width, height, "R32UI")
        self.accum_lo = host.texture("accum_lo", width, height, "R32UI")
        self.frame = host.texture("frame", width, height, "RGBA32F")
        self.stats = host.texture("stats", 1, 1, "R32UI")

    def splat(self, system: ParticleSystem, camera: Camera, live=None) -> None:
        """Add the system's particles; with ``live`` (its LiveParticles) only the compacted live ones."""
        s = system.settings
        q = quantize_scale(self.render.emax)
        look = self.host.texture("look", LOOK_SIZE, 1, "RGBA32F", look_table(s, system.ramp))
        layout = system.layout.name
        kernel, live_textures = (SPLAT_KERNELS[layout], {}) if live is None else (SPLAT_LIVE_KERNELS[layout], live.textures)
        self.host.dispatch(
            kernel, system.groups,
            {**system.textures, **live_textures, "accum_hi": self.accum_hi, "accum_lo": self.accum_lo,
             "stats": self.stats, "look": look},
            {
                "count": system.count,
                "target_size": (self.width, self.height),
                "view_proj": camera.view_proj,
                "color_start": (*s.color_start, s.emission_strength),
                "color_end": (*s.color_end, s.size),
                "quantize": (*q, camera.pixels_per_unit),
                "state_origin": (*system.origin, 0.0),
                "look_random": (s.color_random, s.size_random, 0.0, 0.0),
                "look_seed": s.seed,
            },
        )

    def resolve(self) -> None:
        self.host.dispatch(
            RESOLVE, RESOLVE.groups_for(self.width, self.height),
            {"accum_hi": self.accum_hi, "accum_lo": self.accum_lo, "frame": self.frame},
            {"target_size": (self.width, self.height), "dequantize": (*dequantize_scale(self.render.emax), 0.0)},
        )

    def read_frame(self) -> np.ndarray:
        return self.host.read(self.frame)

    def take_overflow_count(self) -> int:
        """Overflowing atomic adds since the last call (the UI shows it), then reset."""
        count = int(self.host.read(self.stats)[0, 0])
        self.host.clear(self.stats)
        return count
