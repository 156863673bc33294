"""The shadow volume's kernels in numpy (shadow_volume.py), and the exact transmittance they approximate.

``bounds`` .. ``sample`` follow the kernels step by step (float32 where the
kernel's result is an integer or a placement); ``exact_transmittance`` is the
ground truth of the particle density model: every particle an isotropic
Gaussian of its extinction cross-section (density x shadow density x pi r^2)
with standard deviation r / 2, the optical depth along the ray from a point to
the light summed over every particle (each Gaussian's line integral in closed
form: the limit of ray marching it with ever smaller steps).
"""

from __future__ import annotations

import numpy as np

from ...light.shadow_volume import (
    BLUR_TAPS,
    DENSITY_SCALE,
    DITHER_STREAM,
    LIGHT_KINDS,
    MAX_PARTICLE_DEPTH,
    MIN_VOXEL,
    SPREAD,
    STEPS_PER_VOXEL,
    sublevel_level,
    sublevel_sizes,
)
from ...look.look import look_at, variation
from ...seam.random import random_unit
from ...seam.records import PARTICLE
from ..seam.state import alive

F = np.float32


def particles(pos_age, vel_life, settings, table):
    """(centers, radii) of the live particles among (n, 4) world states, and their slots, as the kernels
    read them (shadow_particle.glsl)."""
    particle = PARTICLE.read_images(pos_age, vel_life)
    slots = np.flatnonzero(alive(pos_age, vel_life))
    t = (particle["age"][slots] / particle["life"][slots]).astype(F)
    radii = (F(settings.size) * look_at(table, t)[:, 3] * variation(slots, settings.size_random, settings.seed, "SIZE"))
    return particle["position"][slots].astype(F), radii.astype(F), slots


def place(lower, upper, resolution: int) -> np.ndarray:
    """shadow_place.glsl: (corner xyz, voxel edge) around the bounds, zeros without any."""
    lower, upper = np.asarray(lower, F), np.asarray(upper, F)
    if not (lower <= upper).all():
        return np.zeros(4, F)
    longest = max(float((upper - lower).max()), MIN_VOXEL)
    mantissa, exponent = np.frexp(F(F(longest) / F(resolution - 3)))
    voxel = F(np.ldexp(1.0, int(exponent) - (mantissa == 0.5)))
    return np.array([*((np.floor(lower / voxel) - 1) * voxel), voxel], F)


def bounds(centers, radii):
    return (centers - radii[:, None]).min(axis=0), (centers + radii[:, None]).max(axis=0)


def splat(centers, radii, slots, scale: float, grid, resolution: int) -> list[np.ndarray]:
    """shadow_density.glsl: each sublevel's fixed-point sums (z, y, x) uint32 (sublevel_sizes), every
    particle's 8 corner adds in the one or two sublevels its radius picks."""
    sizes = sublevel_sizes(resolution)
    sums = [np.zeros((size,) * 3, np.uint64) for size in sizes]
    voxel = grid[3]
    depth = (F(scale) * F(np.pi) * radii * radii / (voxel * voxel)).astype(F)
    sublevel = np.clip(F(2) * np.log2(np.maximum(radii / (F(SPREAD) * voxel), 1)), 0, len(sizes) - 1)
    below = np.minimum(sublevel.astype(np.int64), len(sizes) - 1)
    upper_share = (sublevel - below).astype(F)
    for lift, share in ((0, 1 - upper_share), (1, upper_share)):
        for index in np.unique(below + lift):
            chosen = (below + lift == index) & (share > 0) & (depth > 0)
            _splat_sublevel(sums[index], centers[chosen], slots[chosen], (depth * share)[chosen], grid, index)
    return [total.astype(np.uint32) for total in sums]


def _splat_sublevel(sums, centers, slots, depth, grid, sublevel: int) -> None:
    size, level = sums.shape[0], sublevel_level(sublevel)
    cells = ((centers - grid[:3]) / grid[3] / F(2**level) - F(0.5)).astype(F)
    base = np.floor(cells)
    fraction = cells - base
    level_depth = np.minimum(depth / F(8**level), F(MAX_PARTICLE_DEPTH))
    for corner in range(8):
        offset = np.array([corner & 1, (corner >> 1) & 1, corner >> 2])
        weights = np.where(offset, fraction, 1 - fraction).prod(axis=1)
        units = level_depth * weights * F(DENSITY_SCALE) + random_unit(slots, corner + 8 * sublevel, DITHER_STREAM)
        x, y, z = np.clip(base.astype(np.int64) + offset, 0, size - 1)[units >= 1].T
        np.add.at(sums, (z, y, x), units[units >= 1].astype(np.uint64))


def sublevel_blur(sublevel: int) -> float:
    """shadow_levels.glsl's sublevel_blur: the Gaussian's standard deviation in voxels of the sublevel's level."""
    level = sublevel_level(sublevel)
    spread = 0.5 * SPREAD * 2 ** (0.5 * sublevel - level)
    return float(np.sqrt(max(spread**2 - 1 / 6 - (1 / 6 if level else 0) - 1 / (6 * 4**level), 0.0)))


def blur(sums) -> list[np.ndarray]:
    """shadow_blur.glsl along x, y and z: each sublevel (z, y, x) blurred by its Gaussian, clamped to its edge."""
    taps = np.arange(-BLUR_TAPS, BLUR_TAPS + 1)
    blurred = []
    for sublevel, level_sums in enumerate(sums):
        deviation = sublevel_blur(sublevel)
        weights = np.exp(-0.5 * taps**2 / deviation**2) if deviation > 0 else (taps == 0).astype(np.float64)
        weights /= weights.sum()
        volume = level_sums.astype(np.float64)
        size = volume.shape[0]
        for axis in (2, 1, 0):  # x, y, z of a (z, y, x) array
            volume = sum(weight * np.take(volume, np.clip(np.arange(size) + tap, 0, size - 1), axis=axis)
                         for tap, weight in zip(taps, weights))
        blurred.append(volume)
    return blurred


def resolve(blurred, resolution: int) -> np.ndarray:
    """shadow_resolve.glsl: optical depth across one voxel edge, float32 (z, y, x): every blurred sublevel
    read trilinearly at each voxel's center."""
    index = np.indices((resolution,) * 3)[::-1].reshape(3, -1).T  # x, y, z per voxel
    total = np.zeros(len(index))
    for sublevel, volume in enumerate(blurred):
        total += trilinear(volume, (index + 0.5) / 2 ** sublevel_level(sublevel))
    return (total / DENSITY_SCALE).reshape((resolution,) * 3).astype(F)


def trilinear(volume, cells):
    """A (z, y, x[, c]) volume sampled as the GPU filters a texture (clamped to its edge) at (n, 3) points in
    voxels from the corner (voxel centers at + 0.5)."""
    size = np.array(volume.shape[2::-1])
    f = np.asarray(cells, np.float64) - 0.5
    base = np.floor(f).astype(np.int64)
    fraction = f - base
    total = 0.0
    for corner in range(8):
        offset = np.array([corner & 1, (corner >> 1) & 1, corner >> 2])
        weights = np.where(offset, fraction, 1 - fraction).prod(axis=1)
        x, y, z = np.clip(base + offset, 0, size - 1).T
        values = volume[z, y, x]
        total = total + (weights[:, None] * values if values.ndim == 2 else weights * values)
    return total


def _toward(rows, start):
    """Unit directions toward each slot's light from (n, 3) points and how far it is (inf for a sun)."""
    light = rows[:3].astype(np.float64)
    if rows[3] == LIGHT_KINDS["DIRECTIONAL"]:
        return np.broadcast_to(light, start.shape), np.full(len(start), np.inf)
    toward = light - start
    reach = np.linalg.norm(toward, axis=1)
    return toward / np.maximum(reach, 1e-30)[:, None], reach


def march(density, grid, light_rows) -> np.ndarray:
    """shadow_march.glsl without scene shadows: (z, y, x, 4) transmittance of every voxel toward each slot."""
    resolution = density.shape[0]
    index = np.indices(density.shape)[::-1].reshape(3, -1).T  # x, y, z per voxel
    start = grid[:3].astype(np.float64) + (index + 0.5) * grid[3]
    result = np.ones((len(start), 4))
    if grid[3] <= 0:
        return result.reshape(*density.shape, 4)
    corner, far = grid[:3].astype(np.float64), grid[:3] + resolution * np.float64(grid[3])
    for slot, rows in enumerate(light_rows):
        if rows[3] == LIGHT_KINDS["NONE"]:
            continue
        direction, reach = _toward(rows, start)
        with np.errstate(divide="ignore", invalid="ignore"):
            inverse = 1.0 / direction
            exits = np.maximum((corner - start) * inverse, (far - start) * inverse)
        distance = np.minimum(np.nan_to_num(exits, nan=np.inf).min(axis=1).clip(0), reach)
        steps = np.ceil(distance * STEPS_PER_VOXEL / grid[3]).astype(np.int64)
        length = np.where(steps > 0, distance / np.maximum(steps, 1), 0.0)
        depth = np.zeros(len(start))
        for i in range(int(steps.max(initial=0))):
            going = i < steps
            points = start[going] + direction[going] * (length[going] * (i + 0.5))[:, None]
            depth[going] += trilinear(density, (points - corner) / grid[3])
        result[:, slot] = np.exp(-depth * length / grid[3])
    return result.reshape(*density.shape, 4)


def sample(transmittance, grid, points) -> np.ndarray:
    """shadow_volume.glsl's shadow_transmittance at (n, 3) world points."""
    result = np.ones((len(points), 4))
    if grid[3] <= 0:
        return result
    cells = (np.asarray(points, np.float64) - grid[:3]) / grid[3]
    inside = ((cells >= 0) & (cells <= transmittance.shape[0])).all(axis=1)
    result[inside] = trilinear(transmittance, cells[inside])
    return result


def erf(x):
    """The error function within 1.5e-7 (Abramowitz and Stegun 7.1.26): numpy has none."""
    x = np.asarray(x, np.float64)
    t = 1.0 / (1.0 + 0.3275911 * np.abs(x))
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return np.sign(x) * (1.0 - poly * np.exp(-x * x))


def exact_transmittance(centers, radii, scale: float, points, light_rows) -> np.ndarray:
    """(n, 4) transmittance at ``points`` toward each slot's light through every particle's Gaussian
    (standard deviation r / 2, total cross-section scale x pi r^2): the optical depth of the ray from the point
    to the light (to infinity for a sun), each Gaussian's line integral exactly."""
    centers, points = np.asarray(centers, np.float64), np.asarray(points, np.float64)
    sigma = scale * np.pi * np.asarray(radii, np.float64) ** 2
    spread = np.maximum(np.asarray(radii, np.float64) / 2, 1e-12)
    result = np.ones((len(points), 4))
    for slot, rows in enumerate(light_rows):
        if rows[3] == LIGHT_KINDS["NONE"]:
            continue
        direction, reach = _toward(rows, points)
        offset = centers[None, :, :] - points[:, None, :]  # (points, particles, 3)
        along = (offset * direction[:, None, :]).sum(axis=2)
        across = (offset ** 2).sum(axis=2) - along ** 2
        line = np.exp(-np.maximum(across, 0) / (2 * spread ** 2)) / (2 * np.pi * spread ** 2)
        end = np.minimum(reach, 1e30)[:, None]
        covered = 0.5 * (erf((end - along) / (np.sqrt(2) * spread)) - erf(-along / (np.sqrt(2) * spread)))
        result[:, slot] = np.exp(-(sigma * line * covered).sum(axis=1))
    return result
