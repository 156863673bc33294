"""The VDB grids' kernels in numpy (light/volume_grids.py): volume_splat's fixed-point sums, volume_resolve's floats.

Float32 in the kernels' order, so the sums come out equal to the GPU's; every particle's 8 corner adds with the
same dithered rounding.
"""

from __future__ import annotations

import numpy as np

from ...light.shadow_volume import DENSITY_SCALE, MAX_PARTICLE_DEPTH
from ...light.volume_grids import (
    GRIDS,
    MAX_VELOCITY_UNITS,
    VELOCITY_SCALE,
    VOLUME_DITHER_STREAM,
    WEIGHT_SCALE,
    cross_section_scale,
)
from ...look.look import look_at, variation
from ...seam.random import random_unit
from ...seam.records import PARTICLE
from .shadow_volume import particles

F = np.float32


def lanes(grid: str, pos_age, vel_life, settings, table, voxel: float):
    """(centers, slots, (n, lanes) float32 values, discs) of the live particles: what volume_splat.glsl adds per
    unit of trilinear weight for ``grid``, and each one's disc in voxel faces."""
    centers, radii, slots = particles(pos_age, vel_life, settings, table)
    disc = (F(np.pi) * radii * radii / (F(voxel) * F(voxel))).astype(F)
    if grid == "density":
        values = np.minimum(F(cross_section_scale(settings)) * disc, F(MAX_PARTICLE_DEPTH))[:, None] * F(DENSITY_SCALE)
    elif grid == "emission":
        particle = PARTICLE.read_images(pos_age, vel_life)
        look = look_at(table, (particle["age"][slots] / particle["life"][slots]).astype(F))
        emission = 0.0 if settings.lighting == "LIT" else settings.emission_strength
        strength = F(emission) * variation(slots, settings.color_random, settings.seed, "BRIGHTNESS") * F(1)
        color = look[:, :3] * strength[:, None]
        values = np.minimum(color * disc[:, None], F(MAX_PARTICLE_DEPTH)) * F(DENSITY_SCALE)
    else:
        velocity = PARTICLE.read_images(pos_age, vel_life)["velocity"][slots].astype(F)
        values = np.concatenate([np.clip(velocity * F(VELOCITY_SCALE), -MAX_VELOCITY_UNITS, MAX_VELOCITY_UNITS),
                                 np.full((len(slots), 1), WEIGHT_SCALE, F)], axis=1)
    return centers, slots, values.astype(F), disc


def splat(centers, slots, values, disc, corner, voxel: float, shape) -> list[np.ndarray]:
    """volume_splat.glsl: each lane's uint32 sums, (z, y, x) of a grid of ``shape`` (x, y, z) voxels (particles
    without size, ``disc`` 0, add nothing)."""
    keep = np.isfinite(values).all(axis=1) & (disc > 0)
    centers, slots, values = centers[keep], slots[keep], values[keep]
    x_size, y_size, z_size = shape
    sums = [np.zeros((z_size, y_size, x_size), np.int64) for _ in range(values.shape[1])]
    cells = ((centers - np.asarray(corner, F)) / F(voxel) - F(0.5)).astype(F)
    base = np.floor(cells)
    fraction = cells - base
    for corner_index in range(8):
        offset = np.array([corner_index & 1, (corner_index >> 1) & 1, corner_index >> 2])
        weights = np.where(offset, fraction, F(1) - fraction).astype(F)
        weight = (weights[:, 0] * weights[:, 1] * weights[:, 2]).astype(F)
        voxel_index = base.astype(np.int64) + offset
        inside = ((voxel_index >= 0) & (voxel_index < np.asarray(shape))).all(axis=1)
        for lane, total in enumerate(sums):
            units = (values[:, lane] * weight + random_unit(slots, 4 * corner_index + lane, VOLUME_DITHER_STREAM))
            add = np.floor(units.astype(F)).astype(np.int64)
            chosen = inside & (add != 0)
            x, y, z = voxel_index[chosen].T
            np.add.at(total, (z, y, x), add[chosen])
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
    out = {}
    for grid in GRIDS:
        out[grid] = resolve(grid, splat(*lanes(grid, pos_age, vel_life, settings, table, voxel), corner, voxel, shape),
                            voxel)
    return out
