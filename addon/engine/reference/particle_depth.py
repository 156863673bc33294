"""Reference of particle_depth.glsl: the nearest lit particle's view depth per pixel."""

from __future__ import annotations

import numpy as np

from ..look import look_at, look_table, variation
from ..particle_depth import FAR, MAX_FOOTPRINT
from .compositing import F, reaching


def nearest_depth(pos_age, vel_life, view_proj, view_depth, width, height, settings, pixels_per_unit, ramp=None):
    """(height, width) float32: the least depth of the particles marking each pixel, FAR elsewhere.

    A particle marks the square of its projected radius (whole pixels, at most
    MAX_FOOTPRINT each side) around its splat pixel, unless it adds no light.
    """
    index, clip, w, t, pixel = reaching(pos_age, vel_life, view_proj, width, height)
    look = look_at(look_table(settings, ramp), t)
    lit = F(settings.emission_strength) * look[:, :3].max(axis=1) > 0
    radius_px = F(settings.size) * look[:, 3] * variation(index, settings.size_random, settings.seed, "SIZE") \
        * F(pixels_per_unit) / w
    reach = np.clip(radius_px.astype(np.int64), 1, MAX_FOOTPRINT)  # at least 3x3: anti-aliased points light 2x2
    depth = np.maximum(pos_age[index, :3].astype(np.float64) @ view_depth[:3] + view_depth[3], 0).astype(F)
    out = np.full((height, width), F(FAR), F)
    for (x, y), r, d in zip(pixel[lit], reach[lit], depth[lit]):
        block = out[max(y - r, 0): y + r + 1, max(x - r, 0): x + r + 1]
        np.minimum(block, d, out=block)
    return out
