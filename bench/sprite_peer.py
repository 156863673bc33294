"""The rasterized alpha sprites the tile-binned compositor replaced: the peer of its look and speed.

One instanced camera-facing quad per particle (``bench/shaders/sprite_alpha_raster.glsl``),
drawn in the order of sorted key-index pairs with premultiplied "over"; used
by tests/engine/draw/test_sprites.py (the looks agree within 1/255 where both orders
agree) and by bench/sprite_bench.py (the speed).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from addon.engine.draw.sprites import SPRITE_FOOTPRINT
from addon.engine.look.look import COLOR_END, COLOR_START, LOOK_RANDOM, LOOK_SEED, particle_values
from addon.engine.seam.kernels import Constant, Image, Raster, Sampler, include_source

SHADERS = Path(__file__).resolve().parent / "shaders"
QUAD_VERTICES = 6


@dataclass(frozen=True)
class BenchRaster(Raster):
    """A raster program whose own file lives in bench/shaders (``<name>.glsl``)."""

    def body(self) -> str:
        return self.records + include_source(self.includes) + (SHADERS / f"{self.name}.glsl").read_text()

    def source_lines(self):
        return [(f"bench/shaders/{self.name}.glsl", n + 1) for n in range(self.body().count("\n"))]


RASTER_SPRITES = BenchRaster(
    "sprite_alpha_raster",
    images=(Image("look", "RGBA32F", "READ"),),
    samplers=(Sampler("pos_age"), Sampler("vel_life"), Sampler("indices", "UINT_2D")),
    constants=(
        Constant("INT", "count"), Constant("MAT4", "view_proj"), COLOR_START, COLOR_END,
        next(c for c in SPRITE_FOOTPRINT.constants if c.name == "sprite_params"), Constant("VEC4", "state_origin"),
        LOOK_RANDOM, LOOK_SEED,
    ),
    includes=("common.glsl", "random.glsl", "look.glsl", "particle_alive.glsl", "particle_look.glsl"),
    defines=(("SPRITE_INDIRECT", "1"),),
    varyings=(("VEC4", "v_color"), ("VEC2", "v_corner")),
)


def draw_rasterized(host, target, systems, resources, camera, indices) -> None:
    """Each system's sprites through its sorted ``indices``, back to front, over a cleared ``target``."""
    host.clear(target)
    for system, order in zip(systems, indices):
        s = system.settings
        host.draw(
            RASTER_SPRITES, "TRIS", QUAD_VERTICES, system.count, target, resources.depth_image,
            {"pos_age": system.pos_age, "vel_life": system.vel_life, "look": resources.look_texture(system),
             "indices": order},
            {
                "count": system.count, "view_proj": camera.view_proj,
                **particle_values(system),
                "sprite_params": (camera.pixels_per_unit, s.opacity, camera.width, camera.height),
            },
            blend="OVER",
        )
