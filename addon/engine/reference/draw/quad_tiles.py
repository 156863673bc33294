"""Reference of quad_accumulate (quad_tiles.py): every quad's falloff at the pixel centres it may cover, in float64.

Takes the footprints quad_footprint wrote (records.SPRITE_SHAPE, the streak,
records.QUAD_AXES, the color, its w the quad's inner2) and adds each quad's
``color * quad_falloff`` (``raster.quad_falloff``: the round sprite swept along
its streak, flat-topped out of focus, with its filter's tail), at the pixel centre in
the quad's (along, across) frame over its radius: what the rasterized quads'
fragments add.
The footprint itself (quad_frame.glsl) is held to raster_quads.glsl's vertex
stage by the tests (tests/engine/draw/test_quad_tiles.py), and for still round sprites to
``raster.round_quads``.
"""

from __future__ import annotations

import numpy as np

from ...seam.records import QUAD_AXES, SPRITE_SHAPE
from ..order.tile_lists import pixel_rects
from .raster import quad_falloff


def accumulate(layer, shape, streak, axes, color, scene_depth=None):
    """``layer`` (height, width, 4) plus every quad (float64), and the bound of a pixel's rounding: the sum over
    the quads whose rectangle holds it of their largest channel (each add is at most that)."""
    layer = layer.astype(np.float64).copy()
    bound = np.zeros(layer.shape[:2])
    height, width = layer.shape[:2]
    shapes, frames = SPRITE_SHAPE.read(shape), QUAD_AXES.read(axes)
    for quad, (x0, y0, x1, y1) in enumerate(pixel_rects(shape, streak, width, height)):
        if x1 < x0 or y1 < y0:
            continue
        y, x = np.mgrid[y0:y1 + 1, x0:x1 + 1] + 0.5
        dx, dy = x - shapes["center"][quad, 0], y - shapes["center"][quad, 1]
        ax, ay = frames["along"][quad].astype(np.float64)
        radius = float(shapes["radius"][quad])
        u, v = (dx * ax + dy * ay) / radius, (dy * ax - dx * ay) / radius
        falloff = quad_falloff(u, v, float(frames["sweep"][quad]), float(color[quad, 3]), float(frames["core"][quad]))
        if scene_depth is not None:
            falloff = np.where(shapes["depth"][quad] <= scene_depth[y0:y1 + 1, x0:x1 + 1], falloff, 0.0)
        layer[y0:y1 + 1, x0:x1 + 1, :3] += falloff[..., None] * color[quad, :3]
        bound[y0:y1 + 1, x0:x1 + 1] += float(np.abs(color[quad, :3]).max())
    return layer, bound
