"""The VDB grids' kernels in numpy (light/volume_grids.py): volume_splat's fixed-point sums, volume_resolve's floats.

Float32 in the kernels' order (the supports' weights summed voxel by voxel, z slowest), so the sums come out
equal to the GPU's; every particle's adds with the same dithered rounding.
"""

from __future__ import annotations

import numpy as np

from ...light.shadow_volume import DENSITY_SCALE, MAX_PARTICLE_DEPTH
from ...light.volume_grids import (
    GRIDS,
    MAX_SUPPORT,
    MAX_VELOCITY_UNITS,
    MIN_SUPPORT,
    VELOCITY_SCALE,
    VOLUME_DITHER_STREAM,
    WEIGHT_SCALE,
    cross_section_scale,
)
from ...look.look import particle_look, variation
from ...seam.random import random_unit
from ...seam.records import PARTICLE
from .shadow_volume import particles

F = np.float32
SPAN = int(2 * MAX_SUPPORT) + 2  # the most voxels a support spans along an axis


def lanes(grid: str, pos_age, vel_life, settings, table, voxel: float):
    """(centers, slots, (n, lanes) float32 values, radii) of the live particles: what volume_splat.glsl adds in
    all for ``grid`` (spread over each one's support), and each one's world radius."""
    centers, radii, slots = particles(pos_age, vel_life, settings, table)
    disc = (F(np.pi) * radii * radii / (F(voxel) * F(voxel))).astype(F)
    if grid == "density":
        values = (F(cross_section_scale(settings)) * disc * F(DENSITY_SCALE))[:, None]
    elif grid == "emission":
        particle = PARTICLE.read_images(pos_age, vel_life)
        look = particle_look(table, (particle["age"][slots] / particle["life"][slots]).astype(F),
                             particle["velocity"][slots], settings)
        emission = 0.0 if settings.lighting == "LIT" else settings.emission_strength
        strength = F(emission) * variation(slots, settings.color_random, settings.seed, "BRIGHTNESS") * F(1)
        color = look[:, :3] * strength[:, None]
        values = color * disc[:, None] * F(DENSITY_SCALE)
    else:
        velocity = PARTICLE.read_images(pos_age, vel_life)["velocity"][slots].astype(F)
        values = np.concatenate([np.clip(velocity * F(VELOCITY_SCALE), -MAX_VELOCITY_UNITS, MAX_VELOCITY_UNITS),
                                 np.full((len(slots), 1), WEIGHT_SCALE, F)], axis=1)
    return centers, slots, values.astype(F), radii


def _weight(cells, voxel_index, inverse_h2):
    """support_weight() of volume_splat.glsl: 1 - d^2 / h^2 at the voxel's center, at least 0."""
    delta = ((voxel_index.astype(F) + F(0.5)) - cells).astype(F)
    d2 = ((delta[:, 0] * delta[:, 0] + delta[:, 1] * delta[:, 1]) + delta[:, 2] * delta[:, 2]).astype(F)
    return np.maximum(F(1) - d2 * inverse_h2, F(0)).astype(F)


def _support(first, last):
    """Each voxel offset of the SPAN^3 cube in the kernel's order, its index and which particles' supports hold it."""
    extent = last - first + 1
    for dz in range(SPAN):
        for dy in range(SPAN):
            for dx in range(SPAN):
                offset = np.array([dx, dy, dz])
                step = (dz * extent[:, 1] + dy) * extent[:, 0] + dx
                yield first + offset, step, (offset < extent).all(axis=1)


def splat(centers, slots, values, radii, corner, voxel: float, shape) -> list[np.ndarray]:
    """volume_splat.glsl: each lane's uint32 sums, (z, y, x) of a grid of ``shape`` (x, y, z) voxels; particles
    without size add nothing."""
    disc = (F(np.pi) * radii * radii / (F(voxel) * F(voxel))).astype(F)
    keep = np.isfinite(values).all(axis=1) & (disc > 0)
    centers, slots, values, radii = centers[keep], slots[keep], values[keep], radii[keep]
    sums = [np.zeros(shape[::-1], np.int64) for _ in range(values.shape[1])]
    most = F(MAX_VELOCITY_UNITS if values.shape[1] == 4 else MAX_PARTICLE_DEPTH * DENSITY_SCALE)  # one add
    cells = ((centers - np.asarray(corner, F)) / F(voxel)).astype(F)
    h = np.clip((radii / F(voxel)).astype(F), F(MIN_SUPPORT), F(MAX_SUPPORT))
    inverse_h2 = (F(1) / (h * h)).astype(F)
    first = np.floor(cells - h[:, None]).astype(np.int64)
    last = np.floor(cells + h[:, None]).astype(np.int64)
    total = np.zeros(len(cells), F)
    for voxel_index, _, inside in _support(first, last):
        total = (total + np.where(inside, _weight(cells, voxel_index, inverse_h2), F(0))).astype(F)
    scaled = (values * (F(1) / total)[:, None]).astype(F)
    for voxel_index, step, inside in _support(first, last):
        weight = _weight(cells, voxel_index, inverse_h2)
        chosen = inside & (weight > 0) & ((voxel_index >= 0) & (voxel_index < np.asarray(shape))).all(axis=1)
        x, y, z = voxel_index[chosen].T
        for lane, lane_sums in enumerate(sums):
            units = np.minimum((scaled[:, lane] * weight).astype(F), most) + random_unit(slots, 4 * step + lane, VOLUME_DITHER_STREAM)
            add = np.floor(units.astype(F)).astype(np.int64)[chosen]
            np.add.at(lane_sums, (z, y, x), add)
    return [(total % 2**32).astype(np.uint32) for total in sums]


def resolve(grid: str, sums, voxel: float) -> np.ndarray:
    """volume_resolve.glsl: the float grid, (z, y, x[, 3])."""
    per_length = F(1) / (F(DENSITY_SCALE) * F(voxel))
    if grid == "density":
        return sums[0].astype(F) * per_length
    if grid == "emission":
        return np.stack([lane.astype(F) * per_length for lane in sums], axis=-1)
    weight = sums[3].astype(F)
    velocity = np.stack([lane.view(np.int32).astype(F) for lane in sums[:3]], axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = velocity * F(WEIGHT_SCALE / VELOCITY_SCALE) / weight[..., None]
    return np.where(weight[..., None] > 0, mean, F(0)).astype(F)


def grids(pos_age, vel_life, settings, table, corner, voxel: float, shape) -> dict[str, np.ndarray]:
    """Every grid as the GPU resolves it, (z, y, x[, 3]) float32."""
    return {grid: resolve(grid, splat(*lanes(grid, pos_age, vel_life, settings, table, voxel), corner, voxel, shape),
                          voxel) for grid in GRIDS}
