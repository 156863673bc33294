"""random.glsl's hash and uniform draws in numpy, bit for bit: the exported point cloud draws each
particle's look randomness (look.py's ``variation``) from the streams the kernels draw from.

The reference (reference/seam/random.py) takes these too, so the kernels are tested against this very hash.
"""

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
