"""The rasterized additive quads the tiled ones replaced (addon/engine/draw/quad_tiles.py): the peer of their look and speed.

``RasterQuads`` draws like ``QuadLayer`` through ``raster.draw`` (raster_quads.glsl, the product's path for
textured quads), so a Compositor given one (``compositor.quads``) draws its untextured quads the old way:
tests/engine/draw/test_quad_tiles.py compares the looks; within ``rasterized_quads()`` every Compositor does, which
bench/blender_gpu.py's events suite times as the fireworks' peer in the same run.
"""

from __future__ import annotations

import contextlib
import dataclasses

from addon.engine.draw import compositing, raster


@dataclasses.dataclass
class RasterQuads:
    """SPRITE and STRETCHED quads rasterized, drawn where ``QuadLayer.draw`` adds its tiled quads."""

    host: object

    def draw(self, system, camera, target, depth, look) -> None:
        raster.draw(self.host, system, camera, target, depth, look)


@contextlib.contextmanager
def rasterized_quads():
    """Compositors made inside draw their untextured quads rasterized (the layer they make at the first quad)."""
    tiled = compositing.QuadLayer
    compositing.QuadLayer = lambda host, width, height, check_every=1: RasterQuads(host)
    try:
        yield
    finally:
        compositing.QuadLayer = tiled
