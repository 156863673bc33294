"""Alpha-blended particles: soft sprites drawn back to front with premultiplied "over".

Beside the additive paths (``compositing.py``: the splat and the rasterized
types), effects in Alpha mode are drawn one instanced quad per particle, the
vertices pulled from the (sorted) state with texelFetch (``raster.py``'s way),
into their own float layer cleared to transparent; ``alpha_over`` then lays
that layer over the resolved frame.  Instance order is drawing order, so the
sort decides what covers what.
"""

from __future__ import annotations

from functools import cache

from .compositing import Camera, Compositor
from .footprint import footprint_constants, motion_variant
from .kernels import Constant, Image, Kernel, Raster, Sampler
from .look import COLOR_END, COLOR_START, LOOK_RANDOM, LOOK_SEED

QUAD_VERTICES = 6

_CONSTANTS = (
    Constant("INT", "count"),
    Constant("MAT4", "view_proj"),
    COLOR_START,
    COLOR_END,
    Constant("VEC4", "sprite_params", components=(
        ("pixel_scale", "x"),  # pixels per world unit at clip w = 1
        ("opacity", "y"),
        ("target_extent", "zw"),  # the target's width and height in pixels
    )),
    Constant("VEC4", "state_origin"),  # xyz: what stored positions are relative to (simulation.py)
    LOOK_RANDOM,
    LOOK_SEED,
)


@cache
def sprites(indirect: bool) -> Raster:
    """The sprite program; ``indirect`` reads particles through sorted key-index pairs."""
    samplers = (Sampler("pos_age"), Sampler("vel_life"))
    return Raster(
        "sprite_alpha",
        images=(Image("look", "RGBA32F", "READ"),),
        samplers=(*samplers, Sampler("indices", "UINT_2D")) if indirect else samplers,
        constants=_CONSTANTS,
        includes=("common.glsl", "random.glsl", "look.glsl", "particle_look.glsl"),
        defines=(("SPRITE_INDIRECT", "1"),) if indirect else (),
        varyings=(("VEC4", "v_color"), ("VEC2", "v_corner")),
    )


ALPHA_OVER = Kernel(
    "alpha_over",
    images=(Image("frame", "RGBA32F"),),
    samplers=(Sampler("sprites"),),
    constants=(Constant("IVEC2", "target_size"),),
    local_size=(16, 16, 1),
    includes=(),
)


class SpriteLayer:
    """The alpha-blended layer of a frame: a float target the size of the compositor's."""

    def __init__(self, host, width: int, height: int):
        self.host = host
        self.width, self.height = width, height
        self.target = host.texture("sprites", width, height, "RGBA32F")

    def draw(self, systems, compositor: Compositor, camera: Camera, indices=None) -> None:
        """Draw each system's sprites in its slot order, or through its sorted ``indices``.

        Effects are drawn one after the other (each sorted in itself), depth-tested
        against the compositor's scene depth when it has one.
        """
        indices = indices or [None] * len(systems)
        self.host.clear(self.target)
        depth = compositor.depth.depth if compositor.depth else None
        for system, order in zip(systems, indices):
            s = system.settings
            textures = {"pos_age": system.pos_age, "vel_life": system.vel_life, "look": compositor.look_texture(system)}
            if order is not None:
                textures["indices"] = order
            kernel = sprites(order is not None)
            if camera.shutter is not None:
                kernel = motion_variant(kernel)
            self.host.draw(
                kernel, "TRIS", QUAD_VERTICES, system.count, self.target, depth, textures,
                {
                    **footprint_constants(Camera(camera.view_proj, camera.width, camera.height, camera.shutter)),
                    "count": system.count,
                    "view_proj": camera.view_proj,
                    "color_start": (*s.color_start, s.emission_strength),
                    "color_end": (*s.color_end, s.size),
                    "sprite_params": (camera.pixels_per_unit, s.opacity, camera.width, camera.height),
                    "state_origin": (*system.origin, 0.0),
                    "look_random": (s.color_random, s.size_random, 0.0, 0.0),
                    "look_seed": s.seed,
                },
                blend="OVER",
            )

    def over(self, compositor: Compositor) -> None:
        """frame = sprites over frame (premultiplied)."""
        self.host.dispatch(
            ALPHA_OVER, ALPHA_OVER.groups_for(self.width, self.height),
            {"frame": compositor.frame, "sprites": self.target},
            {"target_size": (self.width, self.height)},
        )

    def read(self):
        return self.host.read(self.target)
