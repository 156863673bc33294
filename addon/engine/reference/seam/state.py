"""The particle state (seam/state.py) in numpy: which slots hold a live particle."""

from __future__ import annotations

import numpy as np

from ...seam.records import PARTICLE


def alive(pos_age: np.ndarray, vel_life: np.ndarray) -> np.ndarray:
    """particle_alive() of particle_alive.glsl per row of (n, 4) states."""
    particle = PARTICLE.read_images(pos_age, vel_life)
    with np.errstate(invalid="ignore"):
        age, life = particle["age"], particle["life"]
        return (age >= 0) & (age < life) & np.isfinite(particle["position"]).all(axis=1)
