"""Reference of shaders/include/random.glsl: the PCG hash and uniform floats are the engine's own
(engine/seam/random.py: the export draws from them), directions are drawn here."""

from __future__ import annotations

import numpy as np

from ...seam.random import pcg_hash, random_unit

__all__ = ("pcg_hash", "random_unit", "random_direction")

F = np.float32


def random_direction(u, v):
    z = F(2.0) * u - F(1.0)
    r = np.sqrt(np.maximum(F(0.0), F(1.0) - z * z))
    phi = F(6.28318530718) * v
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=-1).astype(F)
