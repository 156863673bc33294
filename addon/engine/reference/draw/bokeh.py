"""Reference of the bokeh discs (bokeh.py): bokeh_discs, the tile lists, bokeh_accumulate, in float32 and their order."""

from __future__ import annotations

import numpy as np

from ...draw.footprint import SPLAT_MAX_RADIUS
from ...seam.records import PARTICLE, SPRITE_SHAPE
from ..order.tile_lists import pixel_rects
from .compositing import particle_colors
from .footprint import paths

F = np.float32


def discs(pos_age, vel_life, view_proj, width, height, settings, pixels_per_unit, focus, shutter=None, ramp=None):
    """(index, shape, path, color) of the particles that are bokeh discs, in slot order: shape (n, 4) the
    records.SPRITE_SHAPE texels (radius: the reach, radius + 1/2); path (n, 2) open to close; color (n, 3) per pixel."""
    index, clip, start, end, spread = paths(pos_age, vel_life, view_proj, width, height, shutter, focus)
    wide = (spread > F(SPLAT_MAX_RADIUS)) & np.isfinite(start).all(axis=1) & np.isfinite(end).all(axis=1)
    index, clip, start, end, radius = index[wide], clip[wide], start[wide], end[wide], spread[wide]
    w = clip[:, 3]
    half_path = F(0.5) * np.hypot(*(end - start).T).astype(F)
    area = F(3.14159265) * (radius * radius + F(1.0 / 12.0)) + F(4) * radius * half_path
    particle = PARTICLE.read_images(pos_age, vel_life)
    t = particle["age"][index] / particle["life"][index]
    color = particle_colors(settings, ramp, t, index, w, pixels_per_unit, particle["velocity"][index]) / area[:, None]
    shape = SPRITE_SHAPE.pack({"center": F(0.5) * (start + end), "radius": radius + F(0.5),
                               "depth": clip[:, 2] / w * F(0.5) + F(0.5)})
    return index, shape, (end - start).astype(F), color.astype(F)


def disc_coverage(shape, path, x, y) -> np.ndarray:
    """sprite_shape.glsl's disc_coverage of pixel centers (x, y) + 1/2 by one disc."""
    shape = SPRITE_SHAPE.read(shape)
    center = shape["center"]
    offset = np.stack([x + F(0.5) - center[0], y + F(0.5) - center[1]], axis=-1).astype(F)
    length2 = F(path @ path)
    if length2 > 0:
        along = np.clip((offset @ path) / length2, F(-0.5), F(0.5))
        offset = offset - along[..., None] * path
    return np.clip(shape["radius"] - np.sqrt((offset * offset).sum(axis=-1)), F(0), F(1)).astype(F)


def accumulate(layer, shape, path, color, scene_depth=None):
    """bokeh_accumulate: ``layer`` (height, width, 4) plus every disc, added per pixel in list order.

    Also returns the bound of one pixel's rounding: the sum over the discs whose
    rectangle holds it of their largest channel (each add is at most that)."""
    layer = layer.astype(F).copy()
    bound = np.zeros(layer.shape[:2], np.float64)
    height, width = layer.shape[:2]
    depth = SPRITE_SHAPE.read(shape)["depth"]
    for disc, (x0, y0, x1, y1) in enumerate(pixel_rects(shape, path, width, height)):
        if x1 < x0 or y1 < y0:
            continue
        y, x = np.mgrid[y0:y1 + 1, x0:x1 + 1].astype(F)
        coverage = disc_coverage(shape[disc], path[disc], x, y)
        if scene_depth is not None:
            coverage = np.where(depth[disc] <= scene_depth[y0:y1 + 1, x0:x1 + 1], coverage, F(0))
        layer[y0:y1 + 1, x0:x1 + 1, :3] += coverage[..., None] * color[disc]
        bound[y0:y1 + 1, x0:x1 + 1] += float(color[disc].max())
    return layer, bound
