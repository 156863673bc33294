"""Reference of sdf.py: the same narrow band, crossings, winding numbers, jump flooding and vote (an open
surface: the slab behind its faces) in numpy, and
``exact_sdf``, the ground truth (brute-force distances, sign by generalized winding number)."""

from __future__ import annotations

import numpy as np

from ...simulate.sdf import AXIS_BITS, CROSSING_BITS, CROSSING_LIMIT, SURFACE_SHELL_VOXELS, VOTES, SdfGrid, flood_jumps

F = np.float32


def triangle_distance2(p: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Squared distance from points p to triangles abc (rows paired), float32, sdf_common.glsl's branches."""
    def dot(u, v):
        return np.einsum("ij,ij->i", u, v)

    ab, ac, ap, bp, cp = b - a, c - a, p - a, p - b, p - c
    d1, d2, d3, d4, d5, d6 = dot(ab, ap), dot(ac, ap), dot(ab, bp), dot(ac, bp), dot(ab, cp), dot(ac, cp)
    vc, vb, va = d1 * d4 - d3 * d2, d5 * d2 - d1 * d6, d3 * d6 - d5 * d4
    with np.errstate(divide="ignore", invalid="ignore"):
        on_ab = ap - ab * (d1 / (d1 - d3))[:, None]
        on_ac = ap - ac * (d2 / (d2 - d6))[:, None]
        on_bc = bp - (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)))[:, None]
        inverse = F(1) / (va + vb + vc)
        on_face = ap - ab * (vb * inverse)[:, None] - ac * (vc * inverse)[:, None]
    cases = [
        ((d1 <= 0) & (d2 <= 0), ap), ((d3 >= 0) & (d4 <= d3), bp), ((d6 >= 0) & (d5 <= d6), cp),
        ((vc <= 0) & (d1 >= 0) & (d3 <= 0), on_ab), ((vb <= 0) & (d2 >= 0) & (d6 <= 0), on_ac),
        ((va <= 0) & (d4 - d3 >= 0) & (d5 - d6 >= 0), on_bc),
    ]
    offset = on_face
    for condition, value in reversed(cases):
        offset = np.where(condition[:, None], value, offset)
    return dot(offset, offset).astype(F)


def band(corners: np.ndarray, dims: tuple[int, int, int]) -> np.ndarray:
    """sdf_band: (nz, ny, nx) nearest triangle id per voxel near the surface (0xFFFFFFFF elsewhere)."""
    size = np.array(dims)
    voxels, ids = [], []
    for t, tri in enumerate(corners):
        low = np.maximum(np.ceil(tri.min(axis=0)).astype(int) - 1, 0)
        high = np.minimum(np.floor(tri.max(axis=0)).astype(int) + 1, size - 1)
        if (high < low).any():
            continue
        grid = np.stack(np.meshgrid(*(np.arange(lo, hi + 1) for lo, hi in zip(low, high)), indexing="ij"), -1)
        voxels.append(grid.reshape(-1, 3))
        ids.append(np.full(len(voxels[-1]), t))
    voxels, ids = np.concatenate(voxels), np.concatenate(ids)
    distance2 = triangle_distance2(voxels.astype(F), *(corners[ids, k] for k in range(3)))
    return _least(voxels, distance2, ids, dims)


def _least(voxels, distance2, ids, dims) -> np.ndarray:
    """Per voxel, the id of least (distance, id)."""
    flat = np.ravel_multi_index((voxels[:, 2], voxels[:, 1], voxels[:, 0]), dims[::-1])
    order = np.lexsort((ids, distance2, flat))
    first = np.ones(len(order), bool)
    first[1:] = flat[order][1:] != flat[order][:-1]
    nearest = np.full(int(np.prod(dims)), 0xFFFFFFFF, np.uint32)
    nearest[flat[order][first]] = ids[order][first]
    return nearest.reshape(dims[::-1])


def _covers(p0, p1, q) -> np.ndarray:
    """sdf_crossings' edge test (the same operations, in the same order)."""
    swapped = (p1[0] < p0[0]) or (p1[0] == p0[0] and p1[1] < p0[1])
    s, e = (p1, p0) if swapped else (p0, p1)
    value = (e[0] - s[0]) * (q[:, 1] - s[1]) - (e[1] - s[1]) * (q[:, 0] - s[0])
    value = -value if swapped else value
    edge = p1 - p0
    top_left = edge[1] < 0 or (edge[1] == 0 and edge[0] > 0)
    return (value > 0) | ((value == 0) & top_left)


def crossings(corners: np.ndarray, dims: tuple[int, int, int]) -> np.ndarray:
    """sdf_crossings: (nz, ny, nx) uint32 words, per axis the crossings of its columns facing along it and
    those facing against it (each count saturating at CROSSING_LIMIT)."""
    counts = np.zeros((3, 2, *dims[::-1]), np.int64)
    for tri in corners:
        for axis in range(3):
            u, w = (axis + 1) % 3, (axis + 2) % 3
            a, b, c = (F(tri[k][[u, w]]) for k in range(3))
            heights = tri[:, axis].astype(F)
            area = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
            if area == 0:
                continue
            against = int(area < 0)
            if area < 0:
                b, c, heights, area = c, b, heights[[0, 2, 1]], -area
            low = np.maximum(np.ceil(np.minimum(a, np.minimum(b, c))).astype(int), 0)
            high = np.minimum(np.floor(np.maximum(a, np.maximum(b, c))).astype(int), np.array([dims[u], dims[w]]) - 1)
            if (high < low).any():
                continue
            q = np.stack(np.meshgrid(np.arange(low[0], high[0] + 1), np.arange(low[1], high[1] + 1),
                                     indexing="ij"), -1).reshape(-1, 2).astype(F)
            q = q[_covers(b, c, q) & _covers(c, a, q) & _covers(a, b, q)]
            wa = (c[0] - b[0]) * (q[:, 1] - b[1]) - (c[1] - b[1]) * (q[:, 0] - b[0])
            wb = (a[0] - c[0]) * (q[:, 1] - c[1]) - (a[1] - c[1]) * (q[:, 0] - c[0])
            height = (wa * heights[0] + wb * heights[1] + (area - wa - wb) * heights[2]) / area
            first = np.maximum(np.ceil(height).astype(int), 0)
            keep = first < dims[axis]
            voxel = np.zeros((keep.sum(), 3), int)
            voxel[:, axis], voxel[:, u], voxel[:, w] = first[keep], q[keep, 0], q[keep, 1]
            np.add.at(counts[axis, against], (voxel[:, 2], voxel[:, 1], voxel[:, 0]), 1)
    counts = np.minimum(counts, CROSSING_LIMIT).astype(np.uint32)
    return sum((counts[axis, 0] | counts[axis, 1] << CROSSING_BITS) << (AXIS_BITS * axis) for axis in range(3))


def _fields(words: np.ndarray, axis: int) -> np.ndarray:
    return (words >> (AXIS_BITS * axis)) & ((1 << AXIS_BITS) - 1)


def winding(words: np.ndarray) -> np.ndarray:
    """sdf_winding: each axis' field replaced by its vote (VOTES): inside where the winding number of the ray
    from the grid's start is not 0, abstain along columns whose crossings do not sum to 0 or saturated."""
    result = np.zeros_like(words)
    for axis in range(3):
        fields = _fields(words, axis).astype(np.int64)
        along, against = fields & CROSSING_LIMIT, fields >> CROSSING_BITS
        column = 2 - axis  # arrays are (z, y, x)
        running = np.cumsum(against - along, axis=column)
        saturated = ((along == CROSSING_LIMIT) | (against == CROSSING_LIMIT)).any(axis=column, keepdims=True)
        abstains = (np.take(running, [-1], axis=column) != 0) | saturated
        votes = np.where(abstains, VOTES["ABSTAIN"], np.where(running != 0, VOTES["INSIDE"], 0))
        result |= (votes.astype(np.uint32) << (AXIS_BITS * axis)).astype(np.uint32)
    return result


def inside(votes: np.ndarray) -> np.ndarray:
    """sdf_write's vote: inside where the axes that voted say so, a tie included (one in, one out)."""
    fields = [_fields(votes, axis) for axis in range(3)]
    inside_votes = sum((f == VOTES["INSIDE"]).astype(int) for f in fields)
    outside_votes = sum((f == 0).astype(int) for f in fields)
    return (inside_votes > 0) & (inside_votes >= outside_votes)


def slab(centres: np.ndarray, corners: np.ndarray, voxels: np.ndarray) -> np.ndarray:
    """sdf_write's field of an open surface, in voxels: ``voxels`` (the distance to the nearest triangle,
    ``corners`` rows paired with ``centres``) in front of that triangle's plane; behind it, the signed distance to
    the slab SURFACE_SHELL_VOXELS thick there."""
    a, b, c = corners[:, 0], corners[:, 1], corners[:, 2]
    behind = np.einsum("ij,ij->i", centres - a, np.cross(b - a, c - a)).astype(F) < 0
    shell = F(SURFACE_SHELL_VOXELS)
    into = np.where(voxels < shell, -np.minimum(voxels, shell - voxels), voxels - shell)
    return np.where(behind, into, voxels).astype(F)


def flood(nearest: np.ndarray, corners: np.ndarray, jump: int) -> np.ndarray:
    """One sdf_flood step (every voxel reads the previous step's ids)."""
    nz, ny, nx = nearest.shape
    centres = np.stack(np.meshgrid(np.arange(nx), np.arange(ny), np.arange(nz), indexing="ij"), -1)
    centres = centres.transpose(2, 1, 0, 3).reshape(-1, 3).astype(F)
    padded = np.pad(nearest, jump, constant_values=0xFFFFFFFF)
    best_d = np.full(nearest.size, np.inf, F)
    best = np.full(nearest.size, 0xFFFFFFFF, np.uint32)
    for dz in (-1, 0, 1):
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                z, y, x = (jump + d * jump for d in (dz, dy, dx))
                candidate = padded[z:z + nz, y:y + ny, x:x + nx].ravel()
                valid = candidate != 0xFFFFFFFF
                d = np.full(nearest.size, np.inf, F)
                ids = candidate[valid].astype(np.int64)
                d[valid] = triangle_distance2(centres[valid], *(corners[ids, k] for k in range(3)))
                better = valid & ((d < best_d) | ((d == best_d) & (candidate < best)))
                best, best_d = np.where(better, candidate, best), np.where(better, d, best_d)
    return best.reshape(nearest.shape)


def build(corners: np.ndarray, grid: SdfGrid) -> np.ndarray:
    """The SDF of ``sdf.mesh_triangles``' corners on ``grid``, (nz, ny, nx) float32 world units."""
    nearest = band(corners, grid.dims)
    for jump in flood_jumps(grid.dims):
        nearest = flood(nearest, corners, jump)
    centres = np.stack(np.meshgrid(*(np.arange(n) for n in grid.dims), indexing="ij"), -1)
    centres = centres.transpose(2, 1, 0, 3).reshape(-1, 3).astype(F)
    ids = nearest.ravel().astype(np.int64)
    voxels = np.sqrt(triangle_distance2(centres, *(corners[ids, k] for k in range(3))))
    if grid.surface:
        return (slab(centres, corners[ids], voxels) * F(grid.voxel)).reshape(nearest.shape)
    distance = voxels * F(grid.voxel)
    votes = winding(crossings(corners, grid.dims)).ravel()
    return np.where(inside(votes), -distance, distance).reshape(nearest.shape).astype(F)


def exact_sdf(vertices: np.ndarray, triangles: np.ndarray, points: np.ndarray, chunk: int = 2048) -> np.ndarray:
    """Exact signed distances at ``points``: the least point-triangle distance over all triangles, negative
    where the generalized winding number's magnitude passes 1/2 (either winding; open meshes too)."""
    corners = np.asarray(vertices, np.float64)[np.asarray(triangles).reshape(-1, 3)]
    points = np.asarray(points, np.float64).reshape(-1, 3)
    result = np.empty(len(points))
    a, b, c = (np.broadcast_to(corners[None, :, k], (1, len(corners), 3)) for k in range(3))
    for start in range(0, len(points), chunk):
        p = points[start:start + chunk, None, :]
        count = len(p)
        pairs = [np.broadcast_to(x, (count, len(corners), 3)).reshape(-1, 3) for x in (p, a, b, c)]
        distance = np.sqrt(triangle_distance2(*pairs).astype(np.float64)).reshape(count, -1).min(axis=1)
        ra, rb, rc = a - p, b - p, c - p
        la, lb, lc = (np.linalg.norm(r, axis=-1) for r in (ra, rb, rc))
        numerator = np.einsum("ijk,ijk->ij", ra, np.cross(rb, rc))
        denominator = (la * lb * lc + np.einsum("ijk,ijk->ij", ra, rb) * lc
                       + np.einsum("ijk,ijk->ij", rb, rc) * la + np.einsum("ijk,ijk->ij", rc, ra) * lb)
        winding = np.arctan2(numerator, denominator).sum(axis=1) / (2 * np.pi)
        result[start:start + chunk] = np.where(np.abs(winding) > 0.5, -distance, distance)
    return result
