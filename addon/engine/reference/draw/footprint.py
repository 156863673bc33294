"""Reference of splat_footprint.glsl: samples along the shutter path and over the disc, bilinear taps, exact split."""

from __future__ import annotations

import numpy as np

from ...draw.compositing import CHANNEL_MAX
from ...draw.footprint import DISC, DISC_LEVELS, MAX_SAMPLES, SPLAT_MAX_RADIUS
from ...seam.records import PARTICLE
from ..seam.exact import transform_points
from ..seam.state import alive
from .compositing import accumulate, particle_colors

F = np.float32
U = np.uint32


def screen_of(clip, size):
    """footprint.glsl's screen_of: window x and y in pixels of clip positions (w > 0)."""
    return (clip[:, :2] / clip[:, 3:4] * F(0.5) + F(0.5)) * size


def _clip(view_proj, points):
    return transform_points(view_proj, points)


def paths(pos_age, vel_life, view_proj, width, height, shutter=None, focus=None):
    """(index, clip, start, end, spread) of the live particles in front of the camera and inside its depth range:
    their clip positions, screen positions at shutter open and close (both here without a shutter) and circles
    of confusion in pixels (zero without a focus), as footprint.glsl computes them."""
    size = np.array([width, height], F)
    particle = PARTICLE.read_images(pos_age, vel_life)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        index = np.flatnonzero(alive(pos_age, vel_life))
        p, v = particle["position"][index], particle["velocity"][index]
        clip = _clip(view_proj, p)
        w = clip[:, 3]
        keep = (w > 0) & (np.abs(clip[:, 2]) <= w)
        index, p, v, clip, w = index[keep], p[keep], v[keep], clip[keep], w[keep]
        here = screen_of(clip, size)
        start, end = here.copy(), here.copy()
        if shutter is not None:
            clip_open = _clip(shutter.view_proj_open, p + v * F(shutter.open))
            clip_close = _clip(shutter.view_proj_close, p + v * F(shutter.close))
            seen = (clip_open[:, 3] > 0) & (clip_close[:, 3] > 0) & np.isfinite(v).all(axis=1)
            start[seen], end[seen] = screen_of(clip_open[seen], size), screen_of(clip_close[seen], size)
        spread = np.zeros(len(index), F) if focus is None else circles_of_confusion(focus, w)
    return index, clip, start, end, spread


def circles_of_confusion(focus, w):
    """footprint.glsl's coc_radius_px at clip w (float32)."""
    return F(focus.scale_px) * np.abs(w - F(focus.distance)) / w


def widened(radius_px, spread):
    """footprint.glsl's focus_widened_px: a sprite's radius out of focus (its spread the circle of confusion)."""
    with np.errstate(invalid="ignore"):
        return np.where(spread > 0, np.sqrt(radius_px * radius_px + spread * spread), radius_px).astype(F)


def footprint_taps(pos_age, vel_life, view_proj, width, height, settings, emax, pixels_per_unit,
                   shutter=None, focus=None, ramp=None, scene_depth=None):
    """(pixel, add, particle) of every tap the kernel adds: (m, 2) int pixels, (m, 3) uint32 colors and the
    (m,) number of the particle (among those drawn) each belongs to.  The kernel merges a particle's taps on
    one pixel into one atomic; the accumulation is the same."""
    size = np.array([width, height], F)
    particle = PARTICLE.read_images(pos_age, vel_life)
    age, life = particle["age"], particle["life"]
    index, clip, start, end, spread = paths(pos_age, vel_life, view_proj, width, height, shutter, focus)
    w = clip[:, 3]
    with np.errstate(invalid="ignore", over="ignore"):
        reach = (spread + F(1))[:, None]
        keep = ((spread <= F(SPLAT_MAX_RADIUS)) & ~(np.maximum(start, end) + reach < 0).any(axis=1)
                & ~(np.minimum(start, end) - reach > size).any(axis=1))
    index, clip, w, start, end, spread = index[keep], clip[keep], w[keep], start[keep], end[keep], spread[keep]

    t = age[index] / life[index]
    color = particle_colors(settings, ramp, t, index, w, pixels_per_unit, particle["velocity"][index])
    q = (np.clip(color * (CHANNEL_MAX / emax).astype(F), F(0), CHANNEL_MAX.astype(F)) + F(0.5)).astype(U)
    some = q.any(axis=1)
    q, start, end, spread = q[some], start[some], end[some], spread[some]
    depth = (clip[:, 2] / w * F(0.5) + F(0.5))[some]

    path = end - start
    needed = np.clip(np.ceil(np.abs(path).max(axis=1)).astype(np.int64), 1, MAX_SAMPLES)
    counts = np.array([c for c, _ in DISC_LEVELS])
    firsts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    radii = np.array([r for _, r in DISC_LEVELS], F)
    level = np.zeros(len(q), np.int64)
    if focus is not None:
        level = (spread[:, None] > radii[None, :-1]).sum(axis=1)
        needed = np.maximum(needed, counts[level])
    n = 1 << np.ceil(np.log2(needed)).astype(np.int64)  # a power of two: the kernel divides exactly
    pixel, add, particle = _taps(q, start, path, spread, n, counts[level], firsts[level], focus is not None, width,
                                 height)
    if scene_depth is not None:  # each tap tested at the particle's depth
        shown = depth[particle] <= scene_depth[pixel[:, 1], pixel[:, 0]]
        pixel, add, particle = pixel[shown], add[shown], particle[shown]
    return pixel, add, particle


def _taps(q, start, path, spread, n, disc_count, disc_first, dof, width, height):
    """(pixel, add, particle) of every tap that lands on the target, in the kernel's order per particle."""
    pixels, adds, particles = [], [], []
    done = np.zeros_like(q)
    nf = n.astype(F)
    qf = q.astype(F)
    for k in range(int(n.max(initial=0))):
        active = k < n
        at = start + path * ((F(k) + F(0.5)) / nf)[:, None]
        if dof:
            at = at + DISC[disc_first + k % disc_count] * spread[:, None]
        corner = np.floor(at - F(0.5))
        f = at - F(0.5) - corner
        w1 = F(1) - f[:, 1]
        weights = ((F(1) - f[:, 0]) * (F(1) - f[:, 1]), w1, w1 + (F(1) - f[:, 0]) * f[:, 1], np.ones(len(q), F))
        for j, upto_weight in enumerate(weights):
            share = qf * ((F(k) + upto_weight) / nf)[:, None]
            last = (k == n - 1) & (j == 3)
            upto = np.where(last[:, None], q, np.maximum((share + F(0.5)).astype(U), done))
            upto = np.where(active[:, None], upto, done)
            add = upto - done
            done = upto
            pixel = corner.astype(np.int64) + [j & 1, j >> 1]
            hit = active & add.any(axis=1) & (pixel >= 0).all(axis=1) & (pixel < [width, height]).all(axis=1)
            pixels.append(pixel[hit])
            adds.append(add[hit])
            particles.append(np.flatnonzero(hit))
    if not pixels:
        return np.zeros((0, 2), np.int64), np.zeros((0, 3), U), np.zeros(0, np.int64)
    return np.concatenate(pixels), np.concatenate(adds), np.concatenate(particles)


def footprint_splat(pos_age, vel_life, view_proj, width, height, settings, emax, pixels_per_unit, **options):
    """Accumulation (hi, lo) and overflow count as the footprint splat leaves them (options: footprint_taps's)."""
    pixel, add, _ = footprint_taps(pos_age, vel_life, view_proj, width, height, settings, emax, pixels_per_unit,
                                   **options)
    return accumulate(pixel, add, width, height)
