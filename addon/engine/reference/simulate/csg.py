"""Reference of csg.py: sample generation, the keep rules (A, B.1, B.2) and compaction."""

from __future__ import annotations

import numpy as np

from ...seam.tables import CSG_STREAMS
from ..seam.random import random_direction, random_unit

F = np.float32


def inside_primitive(p, points: np.ndarray) -> np.ndarray:
    d = points - np.asarray(p.center, F)
    if p.shape == "BOX":
        return (np.abs(d) < np.asarray(p.size, F)).all(axis=1)
    return (d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) + d[:, 2] * d[:, 2] < F(p.size[0]) * F(p.size[0])


def inside_stack(primitives, points: np.ndarray) -> np.ndarray:
    """Inside the solid of ``primitives`` applied in order."""
    inside = np.zeros(len(points), bool)
    for p in primitives:
        inside = np.where(inside_primitive(p, points), p.mode == "ADD", inside)
    return inside


def inside_any(primitives, points: np.ndarray) -> np.ndarray:
    inside = np.zeros(len(points), bool)
    for p in primitives:
        inside |= inside_primitive(p, points)
    return inside


def generate(primitives, first: int, last: int, per_primitive: int, seed: int):
    """New samples of primitives [first, last): (pos with index in w, normal with packed color in w)."""
    pos, attr = [], []
    i = np.arange(per_primitive, dtype=np.uint32)
    stream = (seed * CSG_STREAMS["PER_SEED"]) % 2**32
    for k in range(first, last):
        p = primitives[k]
        u, v = random_unit(i, k, stream + CSG_STREAMS["U"]), random_unit(i, k, stream + CSG_STREAMS["V"])
        size = np.asarray(p.size, F)
        if p.shape == "BOX":
            area = np.array([size[1] * size[2], size[0] * size[2], size[0] * size[1]], F)
            pick = random_unit(i, k, stream + CSG_STREAMS["PICK"]) * area.sum(dtype=F)
            axis = np.where(pick < area[0], 0, np.where(pick < area[0] + area[1], 1, 2))
            side = np.where(random_unit(i, k, stream + CSG_STREAMS["SIDE"]) < 0.5, F(-1), F(1))
            face = np.stack([u, v], axis=1) * F(2) - F(1)
            local = np.zeros((per_primitive, 3), F)
            normal = np.zeros((per_primitive, 3), F)
            rows = np.arange(per_primitive)
            local[rows, axis] = side
            others = np.array([[1, 2], [0, 2], [0, 1]])[axis]
            local[rows, others[:, 0]] = face[:, 0]
            local[rows, others[:, 1]] = face[:, 1]
            normal[rows, axis] = side
            local *= size
        else:
            normal = random_direction(u, v)
            local = normal * size[0]
        if p.mode == "SUBTRACT":
            normal = -normal
        rgb = (np.clip(np.asarray(p.color, F), 0, 1) * F(255) + F(0.5)).astype(np.uint32)
        packed = F(rgb[0] | (rgb[1] << 8) | (rgb[2] << 16))
        pos.append(np.concatenate([np.asarray(p.center, F) + local, np.full((per_primitive, 1), k, F)], axis=1))
        attr.append(np.concatenate([normal, np.full((per_primitive, 1), packed, F)], axis=1))
    return np.concatenate(pos).astype(F), np.concatenate(attr).astype(F)


def keep(primitives, first: int, last: int, kept_pos: np.ndarray, new_pos: np.ndarray):
    """Keep-flags of the kept samples (mode A) and of the new ones (B.1 / B.2, then A for later ones)."""
    keep_old = ~inside_any(primitives[first:last], kept_pos[:, :3])
    keep_new = np.zeros(len(new_pos), bool)
    owner = new_pos[:, 3].astype(int)
    for k in range(first, last):
        mine = owner == k
        points = new_pos[mine, :3]
        on_surface = inside_stack(primitives[:k], points) == (primitives[k].mode == "SUBTRACT")
        keep_new[mine] = on_surface & ~inside_any(primitives[k + 1:last], points)
    return keep_old, keep_new


def add(primitives, first, last, per_primitive, seed, kept_pos, kept_attr):
    """What ``PointCloud.add`` leaves: the kept samples, old ones first, in order."""
    new_pos, new_attr = generate(primitives, first, last, per_primitive, seed)
    keep_old, keep_new = keep(primitives, first, last, kept_pos, new_pos)
    return (np.concatenate([kept_pos[keep_old], new_pos[keep_new]]),
            np.concatenate([kept_attr[keep_old], new_attr[keep_new]]))


def near_any_surface(primitives, points: np.ndarray, owner: np.ndarray, distance: float) -> np.ndarray:
    """Points within ``distance`` of the surface of a primitive other than their own (or of a box edge)."""
    near = np.zeros(len(points), bool)
    for k, p in enumerate(primitives):
        d = points - np.asarray(p.center, F)
        size = np.asarray(p.size, F)
        if p.shape == "BOX":
            q = np.abs(d) - size
            outside = np.linalg.norm(np.maximum(q, 0), axis=1)
            sdf = outside + np.minimum(q.max(axis=1), 0)
            edge = (np.abs(q) < distance).sum(axis=1) >= 2  # own box edges too
            near |= edge & (np.abs(sdf) < distance)
        else:
            sdf = np.linalg.norm(d, axis=1) - size[0]
        near |= (owner != k) & (np.abs(sdf) < distance)
    return near
