"""The VDB grids' kernels in numpy (light/volume_grids.py): volume_splat's fixed-point sums, volume_resolve's floats,
volume_leaf_masks' masks and sizes at each leaf's tree rank, volume_leaf_bytes' records and buffers.

Float32 in the kernels' order (the supports' weights summed voxel by voxel, z slowest), so the sums come out
equal to the GPU's; every particle's adds with the same dithered rounding.
"""

from __future__ import annotations

import numpy as np

from ...light.shadow_volume import DENSITY_SCALE, MAX_PARTICLE_DEPTH
from ...light.volume_grids import (
    GRID_CODES,
    GRIDS,
    LEAF,
    LEAF_HEADER_BYTES,
    LEAF_VOXELS,
    MAX_SUPPORT,
    MAX_VELOCITY_UNITS,
    MIN_SUPPORT,
    RECORD_WORDS,
    TALLY,
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


def tree_rank(leaves, first, span) -> np.ndarray:
    """volume_leaf.glsl's tree_rank: the rank of each of ``leaves`` (m, 3) (VDB leaf coordinates: index / LEAF) in
    the tree's order among the box's leaves (``span`` (3,) a side from ``first``)."""
    leaves, first, n = (np.asarray(a, np.int64) for a in (leaves, first, span))
    end = first + n
    upper, lower = (leaves >> 9) << 9, (leaves >> 4) << 4
    before_upper = upper - np.minimum(upper, first)
    in_upper = np.minimum(upper + 512, end) - np.maximum(upper, first)
    before_lower = lower - np.minimum(lower, np.maximum(upper, first))
    in_lower = np.minimum(lower + 16, end) - np.maximum(lower, first)
    before_leaf = leaves - np.maximum(lower, first)
    (bu, iu, bl, il, b) = (a.T for a in (before_upper, in_upper, before_lower, in_lower, before_leaf))
    return (bu[0] * n[1] * n[2] + iu[0] * bu[1] * n[2] + iu[0] * iu[1] * bu[2] + bl[0] * iu[1] * iu[2]
            + il[0] * bl[1] * iu[2] + il[0] * il[1] * bl[2] + b[0] * il[1] * il[2] + b[1] * il[2] + b[2])


def _grid_leaves(grid: str, values, index, shape):
    """A grid's (z, y, x[, channels]) float values as the kernels see its box's leaves: (VDB leaf coordinates
    (N, 3), ranks (N,), halves' bits (N, 512, lanes) in offset order, active (N, 512))."""
    lanes = min(GRIDS[grid], 3)
    values = np.asarray(values, F)
    values = np.moveaxis(values if values.ndim == 4 else values[..., None], (0, 1, 2), (2, 1, 0))[..., :lanes]
    x, y, z = (n // LEAF for n in shape)
    leaves = values.reshape(x, LEAF, y, LEAF, z, LEAF, lanes).transpose(0, 2, 4, 1, 3, 5, 6)
    with np.errstate(over="ignore"):
        halves = leaves.reshape(x * y * z, LEAF_VOXELS, lanes).astype(np.float16).view(np.uint16)
    first = np.asarray(index) // LEAF
    coordinates = np.indices((x, y, z)).reshape(3, -1).T + first
    return coordinates, tree_rank(coordinates, first, (x, y, z)), halves, ((halves & 0x7FFF) != 0).any(axis=2)


def leaf_masks(values: dict, index, shape, grids=tuple(GRIDS)) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """volume_leaf_masks.glsl over ``grids``' ``values`` (as the GPU resolves them) placed at VDB ``index`` with
    ``shape`` (x, y, z) voxels: (masks (elements, 16) uint32, the sizes then the flags (2 x elements), tally
    (GRIDS, TALLY): leaves, bytes, the complement of the lowest and the highest active voxel's VDB index as ordered
    uints (0 with none)), element: the grid's place in ``grids`` x leaves + the leaf's tree rank."""
    count = int(np.prod(np.asarray(shape) // LEAF))
    masks = np.zeros((len(grids) * count, LEAF_VOXELS // 32), np.uint32)
    sizes = np.zeros(len(grids) * count, np.uint32)
    tally = np.zeros((len(GRIDS), TALLY), np.uint32)
    for slot, grid in enumerate(grids):
        coordinates, ranks, _, active = _grid_leaves(grid, values[grid], index, shape)
        voxels = active.sum(axis=1)
        masks[slot * count + ranks] = np.packbits(active, axis=1, bitorder="little").view("<u4")
        size = np.where(voxels > 0, LEAF_HEADER_BYTES + 2 * min(GRIDS[grid], 3) * voxels, 0)
        sizes[slot * count + ranks] = size
        code = GRID_CODES[grid]
        tally[code, :2] = np.count_nonzero(voxels), size.sum()
        leaf, offset = np.nonzero(active)
        if len(leaf):
            held = coordinates[leaf] * LEAF + np.stack([offset >> 6, (offset >> 3) & 7, offset & 7], axis=1)
            ordered = held.astype(np.int32).view(np.uint32) ^ np.uint32(0x80000000)
            tally[code, 2:] = np.concatenate([~ordered.min(axis=0), ordered.max(axis=0)])
    return masks, np.concatenate([sizes, (sizes > 0).astype(np.uint32)]), tally


def leaf_bytes(values: dict, index, shape, grids=tuple(GRIDS)) -> tuple[np.ndarray, bytes]:
    """volume_leaf_bytes.glsl over ``grids``: (records (leaves, RECORD_WORDS) uint32: mask, lowest voxel's VDB
    index, active voxels; the grids' buffers one after the other), leaves in element order."""
    records, stream = [], []
    for grid in grids:
        coordinates, ranks, halves, active = _grid_leaves(grid, values[grid], index, shape)
        for leaf in np.argsort(ranks):
            if active[leaf].any():
                mask = np.packbits(active[leaf], bitorder="little")
                records.append(np.concatenate([mask.view("<u4"), (coordinates[leaf] * LEAF).astype("<i4").view("<u4"),
                                               [np.count_nonzero(active[leaf])]]))
                stream += [mask.tobytes(), bytes(1), halves[leaf][active[leaf]].astype("<u2").tobytes()]
    return np.array(records, np.uint32).reshape(-1, RECORD_WORDS), b"".join(stream)
