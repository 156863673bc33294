"""Reference of particle_depth.glsl and particle_depth_tiles.glsl: the nearest lit particle's view depth over
every pixel its light covers (footprint.glsl's Reach), in the kernels' float32 arithmetic; and of
trail_depth.glsl, the same over trail segments (in float64: the tests allow the kernel's rounding at edges)."""

from __future__ import annotations

import numpy as np

from ...draw.footprint import SPLAT_MAX_RADIUS
from ...draw.particle_depth import FAR
from ...draw.raster import stretch_seconds
from ...look.lighting import is_lit
from ...look.look import look_table, particle_look, variation
from ...seam.records import PARTICLE
from ..seam.exact import transform_points
from .compositing import F
from .footprint import paths, screen_of, widened
from .raster import quad_reach

TAP_REACH = F(1.5)


def reaches(pos_age, vel_life, view_proj, width, height, settings, pixels_per_unit, kind="POINT", shutter=None,
            focus=None, ramp=None, particle_light=None):
    """(index, center, half_path, radius) of the particles that show (emit, or for a lit effect scatter, some
    light: ``particle_light`` (count, 4), the light pass's radiance a slot) in front of the camera and inside
    its depth range: the capsules of pixel centers their light covers (kind: particle_depth.reach_kind's)."""
    index, clip, start, end, spread = paths(pos_age, vel_life, view_proj, width, height, shutter, focus)
    w = clip[:, 3]
    particle = PARTICLE.read_images(pos_age, vel_life)
    if kind == "QUAD":  # a stretched quad reaches back to where it was stretch_seconds ago
        start = start - stretch_px(particle, index, clip, view_proj, width, height, stretch_seconds(settings))
    look = particle_look(look_table(settings, ramp), particle["age"][index] / particle["life"][index],
                         particle["velocity"][index], settings)
    if kind != "POINT":
        world = F(settings.size) * look[:, 3] * variation(index, settings.size_random, settings.seed, "SIZE") \
            * F(pixels_per_unit)
        if kind == "QUAD":  # raster_quads.glsl's quad: as far as the pixel filter's tail and the lens reach
            sprite = quad_reach(np.maximum(world / w, F(1)), None if focus is None else spread)[0]
        else:
            sprite = world / w if focus is None else widened(np.maximum(world / w, F(1)), spread)  # out of focus
        square = np.sqrt(F(2)) if kind == "TEXTURED" else F(1)  # a sprite image's square reaches its corners
        radius = np.maximum(square * sprite, F(1)) + F(0.5)
    else:
        radius = np.where(spread > F(SPLAT_MAX_RADIUS), spread + F(0.5), spread + TAP_REACH)
    shows = F(settings.emission_strength) * look[:, :3].max(axis=1) > 0
    if is_lit(settings):  # lit_radiance() of particle_look.glsl: a Lit effect's emission is packed as 0
        emission = F(0.0 if settings.lighting == "LIT" else settings.emission_strength)
        shows = (look[:, :3] * emission + np.asarray(particle_light, F)[index, :3]).max(axis=1) > 0
    center, half_path = F(0.5) * (start + end), F(0.5) * (end - start)
    return index[shows], center[shows], half_path[shows], radius[shows].astype(F)


def stretch_px(particle, index, clip, view_proj, width, height, seconds):
    """particle_depth.glsl's stretch_px: from the tail (where each was ``seconds`` ago) to the head, in pixels."""
    size = np.array([width, height], F)
    velocity = particle["velocity"][index]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        tail_clip = transform_points(view_proj, particle["position"][index] - velocity * F(seconds))
        motion = screen_of(clip, size) - screen_of(tail_clip, size)
    seen = (tail_clip[:, 3] > 0) & np.isfinite(velocity).all(axis=1)
    return np.where(seen[:, None], motion, F(0)).astype(F)


def covers(center, half_path, radius, x, y) -> np.ndarray:
    """reach_covers of one reach at pixel centers (x, y) + 1/2, unfused float32 as the kernels compute it."""
    ox, oy = F(x + F(0.5)) - center[0], F(y + F(0.5)) - center[1]
    hx, hy = half_path
    along = ox * hx + oy * hy
    half_length2 = hx * hx + hy * hy
    radius2 = radius * radius
    beyond = (along >= half_length2) | (along <= -half_length2)
    sign = np.where(along >= half_length2, F(-1), F(1))
    ex, ey = ox + sign * hx, oy + sign * hy
    cross = ox * hy - oy * hx
    return np.where(beyond, ex * ex + ey * ey < radius2, cross * cross < radius2 * half_length2)


def nearest_depth(pos_age, vel_life, view_proj, view_depth, width, height, settings, pixels_per_unit, ramp=None,
                  kind="POINT", shutter=None, focus=None, particle_light=None):
    """(height, width) float32: the least depth of the particles covering each pixel, FAR elsewhere."""
    index, center, half_path, radius = reaches(pos_age, vel_life, view_proj, width, height, settings,
                                               pixels_per_unit, kind, shutter, focus, ramp, particle_light)
    position = PARTICLE.read_images(pos_age, vel_life)["position"][index]
    depth = np.maximum(position.astype(np.float64) @ view_depth[:3] + view_depth[3], 0).astype(F)
    out = np.full((height, width), F(FAR), F)
    extent = np.abs(half_path) + radius[:, None]
    low = np.clip(np.floor(center - extent - F(0.5)), 0, [width, height]).astype(np.int64)
    high = np.clip(np.floor(center + extent - F(0.5)) + 1, -1, [width - 1, height - 1]).astype(np.int64)
    for c, h, r, d, (x0, y0), (x1, y1) in zip(center, half_path, radius, depth, low, high):
        if x1 < x0 or y1 < y0:
            continue
        y, x = np.mgrid[y0:y1 + 1, x0:x1 + 1].astype(F)
        block = out[y0:y1 + 1, x0:x1 + 1]
        block[covers(c, h, r, x, y) & (d < block)] = d
    return out


def mark_trails(out, segments, view_depth) -> None:
    """trail_depth.glsl over ``segments`` (reference.trails.ribbon_segments): each that adds light marks the pixel
    centers inside it (along in [0, 1]) within its half width (at least one pixel) plus 1/2 with the view depth
    interpolated between its ends, the least depth kept in ``out`` (height, width)."""
    height, width = out.shape
    y, x = np.mgrid[0:height, 0:width] + 0.5
    centers = np.stack([x, y], axis=-1)
    for segment in segments:
        a, b = segment.ends
        d = b - a
        length2 = d @ d
        if not (length2 > 0 and segment.colors.max() > 0):  # a point, or no light
            continue
        offset = centers - a
        along = offset @ d / length2
        across = np.abs(offset[..., 0] * d[1] - offset[..., 1] * d[0]) / np.sqrt(length2)
        reach = np.maximum(segment.half_px, 1.0) + 0.5
        depth = np.maximum(segment.world @ np.asarray(view_depth[:3], np.float64) + view_depth[3], 0.0)
        inside = (along >= 0) & (along <= 1) & (across < reach[0] + (reach[1] - reach[0]) * along)
        out[inside] = np.minimum(out[inside], (depth[0] + (depth[1] - depth[0]) * along[inside]).astype(F))
