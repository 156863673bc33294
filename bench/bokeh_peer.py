"""The rasterized bokeh sprites the compute bokeh discs replaced (addon/engine/draw/bokeh.py): the peer of their look and speed.

One instanced quad per particle around its circle of confusion, swept over
the shutter with motion blur (``bench/shaders/raster_bokeh.glsl``), added
into the compositor's float layer by the rasterizer.  ``RasterBokeh`` draws
like ``BokehLayer``, so a Compositor given one (``compositor.bokeh``) draws
its wide circles the old way: tests/engine/draw/test_bokeh.py compares the looks,
bench/footprint_bench.py the speeds in the same run.
"""

from __future__ import annotations

import dataclasses
from functools import cache

from addon.engine.draw import raster
from addon.engine.draw.footprint import FOCUS, MOTION_BLUR
from bench.sprite_peer import QUAD_VERTICES, BenchRaster


@cache
def raster_bokeh(motion: bool) -> BenchRaster:
    """The bokeh sprites' program (over the shutter with ``motion``): the quads' resources and the focus."""
    quads = raster.QUADS
    kernel = BenchRaster("raster_bokeh", images=quads.images, samplers=quads.samplers,
                         constants=(*quads.constants, FOCUS), includes=(*quads.includes, "footprint.glsl"),
                         defines=(("DEPTH_OF_FIELD", "1"),),
                         varyings=(("VEC3", "v_color"), ("VEC2", "v_local"), ("VEC2", "v_shape")))
    return MOTION_BLUR.add_to(kernel) if motion else kernel


@dataclasses.dataclass
class RasterBokeh:
    """Wide circles of confusion as rasterized soft discs, drawn where ``BokehLayer.draw`` adds its discs."""

    host: object

    def draw(self, system, camera, target, depth, look) -> None:
        kernel = raster_bokeh(camera.shutter is not None)
        self.host.draw(kernel, "TRIS", QUAD_VERTICES, system.count, target, depth,
                       {"pos_age": system.pos_age, "vel_life": system.vel_life, "look": look},
                       raster.constants(system, camera, 0.0, kernel))
