"""Reference of shaders/include/random.glsl (PCG hash, uniform floats, directions)."""

from __future__ import annotations

import numpy as np

F = np.float32
U = np.uint32


def pcg_hash(v):
    v = np.asarray(v, dtype=U)
    with np.errstate(over="ignore"):
        state = v * U(747796405) + U(2891336453)
        word = ((state >> ((state >> U(28)) + U(4))) ^ state) * U(277803737)
    return (word >> U(22)) ^ word


def random_unit(index, step: int, stream: int):
    h = pcg_hash(np.asarray(index, dtype=U) ^ pcg_hash(U(step) ^ pcg_hash(U(stream))))
    return (h >> U(8)).astype(F) * F(1.0 / 16777216.0)


def random_direction(u, v):
    z = F(2.0) * u - F(1.0)
    r = np.sqrt(np.maximum(F(0.0), F(1.0) - z * z))
    phi = F(6.28318530718) * v
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=-1).astype(F)
