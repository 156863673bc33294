"""Reference of the neighbour grid (simulate/neighbours.py): keys, and each particle's neighbours in visiting order:
the nine rows of cells around its own in (z, y) order, each row's three bins (x from -1 to +1), a bin an earlier
row had skipped, within a bin by slot, kept by the distance test alone."""

from __future__ import annotations

import numpy as np

from ...simulate.neighbours import MAX_NEIGHBOURS, NO_CELL

F = np.float32
LIMIT = F(1 << 30)
# The nine rows of cells around a particle's own in the gather's order: (y, z) offsets, z then y from -1 to +1.
ROWS = np.array([(y - 1, z - 1) for z in range(3) for y in range(3)], np.int64)


def live(pos_age: np.ndarray, vel_life: np.ndarray) -> np.ndarray:
    """particle_alive.glsl's test: born, not expired, finite."""
    age, life = pos_age[:, 3], vel_life[:, 3]
    return (age >= 0) & (age < life) & np.isfinite(pos_age[:, :3]).all(axis=1)


def cells(positions: np.ndarray, inverse_cell: float) -> np.ndarray:
    """grid_cell: floor of the float32 product, clamped to +-2^30."""
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = np.asarray(positions, F)[:, :3] * F(inverse_cell)
        return np.clip(np.floor(scaled), -LIMIT, LIMIT).astype(np.int64)


def hashes(cell: np.ndarray, table: int) -> np.ndarray:
    """grid_hash: the row's hash (Teschner's, of y and z) plus x, in uint32 arithmetic, masked to the table."""
    c = cell.astype(np.int64) & 0xFFFFFFFF
    row = ((c[:, 1] * 19349663) ^ (c[:, 2] * 83492791)) & 0xFFFFFFFF
    return ((row + c[:, 0]) & (table - 1)).astype(np.uint32)


def visited_bins(cell: np.ndarray, table: int) -> list[int]:
    """The bins a particle in ``cell`` walks, in order: each row's three, x from -1 to +1, those an earlier row
    had left out (a row's three bins are distinct: the table has at least three)."""
    rows = np.array([(cell[0] - 1, cell[1] + dy, cell[2] + dz) for dy, dz in ROWS], np.int64)
    bases = hashes(rows, table).astype(np.int64)
    walked: list[int] = []
    for r, base in enumerate(bases):
        walked += [b for b in ((base + k) & (table - 1) for k in range(3))
                   if not any((b - earlier) & (table - 1) < 3 for earlier in bases[:r])]
    return walked


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
    key = keys(pos_age, vel_life, inverse_cell, table)
    by_bin: dict[int, list[int]] = {}
    for slot in np.flatnonzero(alive):  # slot order: the stable sort's order within a bin
        by_bin.setdefault(int(key[slot]), []).append(int(slot))
    radius2 = F(radius) * F(radius)
    lists, overflow = [], 0
    for slot in range(len(pos_age)):
        found: list[int] = []
        if alive[slot]:
            candidates = [j for b in visited_bins(cell[slot], table) for j in by_bin.get(b, ()) if j != slot]
            others = np.array(candidates, np.int64)
            near = others[distance2(pos_age[slot, :3], pos_age[others, :3]) < radius2].tolist() if candidates else []
            overflow += len(near) > limit
            found = near[:limit]
        lists.append(found)
    return lists, overflow
