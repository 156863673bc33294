"""The exact float32 arithmetic of common.glsl's ``transform_point`` and ``flush_denormals``.

numpy rounds every float32 operation once (IEEE), as the kernels' `precise`
paths and ``div_rn`` do on every GPU; a matrix product through BLAS would
fuse and reorder instead, so the order is written out here as in the GLSL.
"""

from __future__ import annotations

import numpy as np

F = np.float32
U = np.uint32


def transform_points(matrix, points: np.ndarray) -> np.ndarray:
    """``transform_point(m, p)`` for every row of ``points`` (n, 3): (n, 4) clip or world positions."""
    m = np.asarray(matrix, dtype=F)
    p = np.asarray(points, dtype=F)
    columns = [m[:, k][None, :] for k in range(4)]
    return ((columns[0] * p[:, 0:1] + columns[1] * p[:, 1:2]) + columns[2] * p[:, 2:3]) + columns[3]


def flush_denormals(x) -> np.ndarray:
    """Zeros and denormals (of either sign) become +0, as ``flush_denormals`` in common.glsl."""
    x = np.asarray(x, dtype=F)
    bits = x.view(U)
    return np.where((bits & U(0x7F800000)) == 0, F(0), x).astype(F)
