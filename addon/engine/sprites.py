"""Alpha-blended particles: soft sprites drawn back to front with premultiplied "over".

Beside the additive splat (``compositing.py``), effects in Alpha mode are
rasterized: one instanced quad per particle, its vertices pulled from the
(sorted) state images with texelFetch, into a float render target cleared to
transparent; ``alpha_over`` then lays that layer over the resolved frame.
Instance order is drawing order, so the sort decides what covers what.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

import numpy as np

from .compositing import Camera, Compositor
from .kernels import Constant, Image, Kernel, Sampler, _read, resource_dir

# The quad each instance draws, two triangles in corner coordinates [-1, 1]^2.
QUAD_CORNERS = ((-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, -1.0), (1.0, 1.0), (-1.0, 1.0))


@dataclass(frozen=True)
class Raster:
    """A vertex + fragment program: ``shaders/<name>_vert.glsl`` and ``<name>_frag.glsl``.

    Its one vertex attribute is ``vec2 corner`` (QUAD_CORNERS); the vertex
    stage writes ``varyings`` and the fragment stage ``vec4 out_color``.
    """

    name: str
    samplers: tuple[Sampler, ...] = ()
    constants: tuple[Constant, ...] = ()
    varyings: tuple[tuple[str, str], ...] = ()  # (type, name), smooth
    includes: tuple[str, ...] = ("common.glsl",)
    defines: tuple[tuple[str, str], ...] = field(default=())

    @property
    def path(self):
        return resource_dir("shaders") / f"{self.name}_vert.glsl"

    def stage_body(self, stage: str) -> str:
        """'vert' or 'frag': the includes (vertex stage only) then the stage's file."""
        files = (*self.includes, f"{self.name}_vert.glsl") if stage == "vert" else (f"{self.name}_frag.glsl",)
        return "".join(_read(f) for f in files)

    def source_lines(self) -> list[tuple[str, int]]:
        origin = []
        for file_name in (*self.includes, f"{self.name}_vert.glsl"):
            origin += [(file_name, n + 1) for n in range(_read(file_name).count("\n"))]
        return origin


SPRITE_SAMPLERS = (Sampler("pos_age"), Sampler("vel_life"))
SPRITE_CONSTANTS = (
    Constant("MAT4", "view_proj"),
    Constant("VEC4", "sprite_scale"),  # xy: clip-space half size of a sprite at w = 1; z: size at death, a fraction
    Constant("VEC4", "state_origin"),  # xyz: what stored positions are relative to (simulation.py)
    Constant("VEC4", "color_start"),  # rgb, w: emission strength
    Constant("VEC4", "color_end"),  # rgb, w: opacity (128 bytes of push constants in all)
)
VARYINGS = (("VEC4", "v_color"), ("VEC2", "v_corner"))
RASTER = (("RASTER_STAGE", "1"),)


@cache
def sprites(indirect: bool) -> Raster:
    """The sprite program; ``indirect`` reads particles through sorted key-index pairs."""
    if indirect:
        return Raster("sprite", (*SPRITE_SAMPLERS, Sampler("indices", "UINT_2D")), SPRITE_CONSTANTS, VARYINGS,
                      defines=(*RASTER, ("SPRITE_INDIRECT", "1")))
    return Raster("sprite", SPRITE_SAMPLERS, SPRITE_CONSTANTS, VARYINGS, defines=RASTER)


ALPHA_OVER = Kernel(
    "alpha_over",
    images=(Image("frame", "RGBA32F"),),
    samplers=(Sampler("sprites"),),
    constants=(Constant("IVEC2", "target_size"),),
    local_size=(16, 16, 1),
    includes=(),
)


def sprite_scale(camera: Camera, radius: float, end_fraction: float = 1.0) -> tuple[float, float, float, float]:
    """Clip-space half size of a sprite of world ``radius`` (times w, so it shrinks with distance)."""
    m = np.asarray(camera.view_proj, dtype=np.float64)
    return (float(np.linalg.norm(m[0, :3])) * radius, float(np.linalg.norm(m[1, :3])) * radius, end_fraction, 0.0)


class SpriteLayer:
    """The alpha-blended layer of a frame: a float render target the size of the compositor's."""

    def __init__(self, host, width: int, height: int):
        self.host = host
        self.width, self.height = width, height
        self.target = host.render_target("sprites", width, height)

    def draw(self, systems, camera: Camera, indices=None) -> None:
        """Draw each system's sprites in its slot order, or through its sorted ``indices``.

        Effects are drawn one after the other (each sorted in itself).
        """
        indices = indices or [None] * len(systems)
        self.host.clear_target(self.target)
        for system, order in zip(systems, indices):
            s = system.settings
            textures = dict(system.textures) if order is None else {**system.textures, "indices": order}
            self.host.draw(
                sprites(order is not None), self.target, system.count, textures,
                {
                    "view_proj": camera.view_proj,
                    "sprite_scale": sprite_scale(camera, s.size, s.size_end),
                    "state_origin": (*system.origin, 0.0),
                    "color_start": (*s.color_start, s.emission_strength),
                    "color_end": (*s.color_end, s.opacity),
                },
            )

    def over(self, compositor: Compositor) -> None:
        """frame = sprites over frame (premultiplied)."""
        self.host.dispatch(
            ALPHA_OVER, ALPHA_OVER.groups_for(self.width, self.height),
            {"frame": compositor.frame, "sprites": self.target},
            {"target_size": (self.width, self.height)},
        )

    def read(self) -> np.ndarray:
        return self.host.read(self.target)
