"""Reference of the neighbour grid (simulate/neighbours.py): keys, and each particle's neighbours in visiting order."""

from __future__ import annotations

import numpy as np

from ...simulate.neighbours import MAX_NEIGHBOURS, NO_CELL

F = np.float32
LIMIT = F(1 << 30)
# The 27 cells around a particle's own in the gather's order: (z, y, x), each from -1 to +1.
OFFSETS = np.array([(x - 1, y - 1, z - 1) for z in range(3) for y in range(3) for x in range(3)], np.int64)


def live(pos_age: np.ndarray, vel_life: np.ndarray) -> np.ndarray:
    """keep_live.glsl's test: born, not expired, finite."""
    age, life = pos_age[:, 3], vel_life[:, 3]
    return (age >= 0) & (age < life) & np.isfinite(pos_age[:, :3]).all(axis=1)


def cells(positions: np.ndarray, inverse_cell: float) -> np.ndarray:
    """grid_cell: floor of the float32 product, clamped to +-2^30."""
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = np.asarray(positions, F)[:, :3] * F(inverse_cell)
        return np.clip(np.floor(scaled), -LIMIT, LIMIT).astype(np.int64)


def hashes(cell: np.ndarray, table: int) -> np.ndarray:
    """grid_hash: Teschner's hash in uint32 arithmetic, masked to the table."""
    c = cell.astype(np.int64) & 0xFFFFFFFF
    h = ((c[:, 0] * 73856093) ^ (c[:, 1] * 19349663) ^ (c[:, 2] * 83492791)) & 0xFFFFFFFF
    return (h & (table - 1)).astype(np.uint32)


def keys(pos_age, vel_life, inverse_cell: float, table: int) -> np.ndarray:
    """grid_keys: each live slot's bin, NO_CELL for the others."""
    out = np.full(len(pos_age), NO_CELL, np.uint32)
    alive = live(pos_age, vel_life)
    out[alive] = hashes(cells(pos_age[alive], inverse_cell), table)
    return out


def distance2(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """grid_distance2: float32, unfused, x + y + z in that order."""
    d = np.asarray(a, F) - np.asarray(b, F)
    return (d[..., 0] * d[..., 0] + d[..., 1] * d[..., 1]) + d[..., 2] * d[..., 2]


def neighbour_lists(pos_age, vel_life, radius: float, inverse_cell: float, table: int,
                    limit: int = MAX_NEIGHBOURS) -> tuple[list[list[int]], int]:
    """Each slot's neighbours (slots) in visiting order, at most ``limit``, and the particles that had more."""
    alive = live(pos_age, vel_life)
    cell = cells(pos_age, inverse_cell)
    by_cell: dict[tuple, list[int]] = {}
    for slot in np.flatnonzero(alive):  # slot order: the stable sort's order within a cell
        by_cell.setdefault(tuple(cell[slot]), []).append(int(slot))
    radius2 = F(radius) * F(radius)
    lists, overflow = [], 0
    for slot in range(len(pos_age)):
        found: list[int] = []
        if alive[slot]:
            candidates = [j for offset in OFFSETS for j in by_cell.get(tuple(cell[slot] + offset), ()) if j != slot]
            near = [j for j in candidates if distance2(pos_age[slot, :3], pos_age[j, :3]) < radius2]
            overflow += len(near) > limit
            found = near[:limit]
        lists.append(found)
    return lists, overflow
