"""Reference of raster_points.glsl: GL_POINTS draws the splat's particles into their pixels, in float.

Each particle the splat would add (same cull, pixel, depth test and color: compositing.py) is blended
into an RGBA16F target instead of quantized into integers: the picture is the float sums, and the
target rounds each blend to half precision, so a kernel matches within that.
(raster_quads.glsl's camera-facing and stretched quads have no reference: their coverage is the GPU
rasterizer's.)
"""

from __future__ import annotations

from .compositing import float_accumulation, project


def points(pos_age, vel_life, view_proj, width, height, settings, pixels_per_unit, ramp=None, scene_depth=None):
    """(height, width, 3) float64: the light GL_POINTS adds, before the target's half-float rounding."""
    pixel, color = project(pos_age, vel_life, view_proj, width, height, settings, pixels_per_unit, ramp, scene_depth)
    return float_accumulation(pixel, color, width, height)
