"""Reference of raster_points.glsl: GL_POINTS draws the splat's particles into their pixels, in float.

Each particle the splat would add (same cull, pixel, depth test and color: compositing.py) is blended
into an RGBA16F target instead of quantized into integers: the picture is the float sums, and the
target rounds each blend to half precision, so a kernel matches within that.
``round_quads`` is raster_quads.glsl's round camera-facing sprite standing still, in and out of focus: its light
falls off as 1 - d^2 inside its radius, so the quad's own edges (the GPU rasterizer's coverage) light nothing.
(Stretched and textured quads have no reference.)
"""

from __future__ import annotations

import numpy as np

from .compositing import F, float_accumulation, particle_colors, particle_radii, project, reaching
from .footprint import circles_of_confusion, widened


def points(pos_age, vel_life, view_proj, width, height, settings, pixels_per_unit, ramp=None, scene_depth=None):
    """(height, width, 3) float64: the light GL_POINTS adds, before the target's half-float rounding."""
    pixel, color = project(pos_age, vel_life, view_proj, width, height, settings, pixels_per_unit, ramp, scene_depth)
    return float_accumulation(pixel, color, width, height)


def round_quads(pos_age, vel_life, view_proj, width, height, settings, pixels_per_unit, focus=None, ramp=None):
    """(height, width, 3) float64: the light raster_quads adds for still, untextured sprites whose centers are in
    view: at least a pixel wide, widened by their circle of confusion under ``focus`` and dimmed by the area ratio."""
    index, clip, w, t, _ = reaching(pos_age, vel_life, view_proj, width, height)
    color = particle_colors(settings, ramp, t, index, w, pixels_per_unit).astype(np.float64)
    sharp = np.maximum(particle_radii(settings, ramp, t, index, w, pixels_per_unit), F(1))
    radius = sharp if focus is None else widened(sharp, circles_of_confusion(focus, w))
    color *= ((sharp / radius) ** 2)[:, None]
    screen = (clip[:, :2] / w[:, None] * F(0.5) + F(0.5)) * np.array([width, height], F)
    y, x = np.mgrid[0:height, 0:width] + 0.5
    picture = np.zeros((height, width, 3))
    for (cx, cy), r, c in zip(screen.astype(np.float64), radius.astype(np.float64), color):
        falloff = 1.0 - ((x - cx) ** 2 + (y - cy) ** 2) / r**2
        picture += np.maximum(falloff, 0.0)[..., None] * c
    return picture
