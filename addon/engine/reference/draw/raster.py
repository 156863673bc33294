"""Reference of raster_points.glsl: GL_POINTS draws the splat's particles into their pixels, in float.

Each particle the splat would add (same cull, pixel, depth test and color: compositing.py) is blended
into an RGBA16F target instead of quantized into integers: the picture is the float sums, and the
target rounds each blend to half precision, so a kernel matches within that.
``round_quads`` is raster_quads.glsl's round camera-facing sprite standing still, in and out of focus and widened
by the pixel filter (quad_filtered_px): its light falls off as 1 - d^2 inside its radius (out of focus flat out to an
inner radius first: quad_defocused_px), a share of it in the filter's wider tail (quad_reach_px), so the quad's own
edges (the GPU rasterizer's coverage) light nothing.
Stretched quads too (``stretch_seconds``); textured quads have no reference.
"""

from __future__ import annotations

import numpy as np

from ...seam.records import PARTICLE
from ..seam.exact import transform_points
from .compositing import F, float_accumulation, particle_colors, particle_radii, project, reaching
from .footprint import circles_of_confusion

PIXEL_FILTER_PX = 1.0  # particle_look.glsl's: a quad widened by the pixel filter
FILTER_TAIL_SCALE, FILTER_TAIL_PX = np.sqrt(0.5), 0.8  # particle_look.glsl's: the filter's tail's reach
FILTER_TAIL_LIGHT = 0.1  # quad_falloff.glsl's: the share of the light in it


def points(pos_age, vel_life, view_proj, width, height, settings, pixels_per_unit, ramp=None, scene_depth=None):
    """(height, width, 3) float64: the light GL_POINTS adds, before the target's half-float rounding."""
    pixel, color = project(pos_age, vel_life, view_proj, width, height, settings, pixels_per_unit, ramp, scene_depth)
    return float_accumulation(pixel, color, width, height)


def round_quads(pos_age, vel_life, view_proj, width, height, settings, pixels_per_unit, focus=None, ramp=None,
                stretch_seconds=0.0):
    """(height, width, 3) float64: the light raster_quads adds for untextured sprites whose centers are in view:
    at least a pixel wide, widened by their circle of confusion under ``focus`` and by the pixel filter, dimmed
    by the area ratio; with ``stretch_seconds`` (the Stretched type's stretch) swept from where each was that
    long ago to where it is (swept_falloff)."""
    index, clip, w, t, _ = reaching(pos_age, vel_life, view_proj, width, height)
    velocity = PARTICLE.read_images(pos_age, vel_life)["velocity"][index]
    color = particle_colors(settings, ramp, t, index, w, pixels_per_unit, velocity).astype(np.float64)
    sharp = np.maximum(particle_radii(settings, ramp, t, index, w, pixels_per_unit), F(1))
    coc = None if focus is None else circles_of_confusion(focus, w)
    reach, inner, core = quad_reach(sharp, coc)
    radius = core * reach
    color *= (sharp * sharp / (radius * radius + inner * inner))[:, None]
    size = np.array([width, height], F)
    head = (clip[:, :2] / w[:, None] * F(0.5) + F(0.5)) * size
    particle = PARTICLE.read_images(pos_age, vel_life)
    tail_clip = transform_points(view_proj, particle["position"][index] - particle["velocity"][index] * F(stretch_seconds))
    motion = head - (tail_clip[:, :2] / tail_clip[:, 3:] * F(0.5) + F(0.5)) * size
    y, x = np.mgrid[0:height, 0:width] + 0.5
    picture = np.zeros((height, width, 3))
    for (hx, hy), (mx, my), r, r_in, k, c in zip(head.astype(np.float64), motion.astype(np.float64),
                                                 reach.astype(np.float64), inner.astype(np.float64),
                                                 core.astype(np.float64), color):
        streak = np.hypot(mx, my)
        along = np.array([mx, my]) / streak if streak > 1e-3 else np.array([1.0, 0.0])
        dx, dy = x - (hx - 0.5 * mx), y - (hy - 0.5 * my)
        u, v = (dx * along[0] + dy * along[1]) / r, (dy * along[0] - dx * along[1]) / r
        inside = np.abs(u) <= 1.0 + 0.5 * streak / r  # the quad's extent along the path
        falloff = quad_falloff(u, v, 0.5 * streak / r, (r_in / (k * r)) ** 2, k)
        picture += np.where(inside, falloff, 0.0)[..., None] * c
    return picture


def quad_filtered(radius_px):
    """particle_look.glsl's quad_filtered_px: a quad's radius widened by the pixel filter."""
    return np.sqrt(radius_px * radius_px + F(PIXEL_FILTER_PX * PIXEL_FILTER_PX)).astype(F)


def quad_defocused(radius_px, coc):
    """footprint.glsl's quad_defocused_px: (outer, inner) radii of a quad spread by its circle of confusion."""
    outer = np.maximum(np.sqrt(radius_px * radius_px + coc * coc), coc + F(0.6) * radius_px)
    return outer.astype(F), np.maximum(coc - F(0.8) * radius_px, F(0)).astype(F)


def quad_reach(sharp, coc=None):
    """particle_look.glsl's quad_reach_px: (reach, inner, core) of quads of sharp radius ``sharp`` (px, at least
    one), out of focus with circles of confusion ``coc``."""
    radius, inner = quad_filtered(sharp), np.zeros_like(sharp)
    tail = F(FILTER_TAIL_SCALE) * sharp + F(FILTER_TAIL_PX)
    if coc is not None:
        radius, inner = quad_defocused(radius, coc)
        tail = tail + coc
    reach = np.maximum(radius, tail).astype(F)
    return reach, inner, (radius / reach).astype(F)


def core_falloff(u, v, h, inner2):
    """quad_falloff.glsl's core_falloff: swept_falloff of the flat-topped falloff out of focus."""
    falloff = swept_falloff(u, v, h)
    if inner2 > 0.0:
        scale = 1.0 / np.sqrt(inner2)
        falloff = (falloff - inner2 * np.maximum(swept_falloff(u * scale, v * scale, h * scale), 0.0)) / (1.0 - inner2)
    return falloff


def quad_falloff(u, v, h, inner2, core):
    """quad_falloff.glsl's quad_falloff: the core ``core`` radii wide, FILTER_TAIL_LIGHT of its light in the filter's
    tail over the whole quad; 0 beyond."""
    center = np.maximum(core_falloff(u / core, v / core, h / core, inner2), 0.0)
    tail = np.maximum(swept_falloff(u, v, h), 0.0) * (1.0 + inner2) * core * core
    return (1.0 - FILTER_TAIL_LIGHT) * center + FILTER_TAIL_LIGHT * tail


def swept_falloff(u, v, h):
    """raster_quads.glsl's swept_falloff: 1 - d^2 averaged along a path of +-h radii, at (u, v) radii from its
    middle (u along the path)."""
    a2 = 1.0 - v * v
    if h < 1e-3:
        return a2 - u * u
    a = np.sqrt(np.maximum(a2, 0.0))
    s0, s1 = np.maximum(-h, u - a) - u, np.minimum(h, u + a) - u
    value = (a2 * (s1 - s0) - (s1**3 - s0**3) / 3.0) / (2.0 * h)
    return np.where((a2 > 0.0) & (s1 > s0), value, 0.0)
