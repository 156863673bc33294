"""Reference of compaction.py: keep-flags of live slots and their compacted index list."""

from __future__ import annotations

import numpy as np


def keep_live(pos_age: np.ndarray, vel_life: np.ndarray) -> np.ndarray:
    age, life = pos_age[:, 3], vel_life[:, 3]
    with np.errstate(invalid="ignore"):
        return ((age >= 0) & (age < life) & np.isfinite(pos_age[:, :3]).all(axis=1)).astype(np.uint32)


def live_index(pos_age: np.ndarray, vel_life: np.ndarray) -> np.ndarray:
    return np.flatnonzero(keep_live(pos_age, vel_life)).astype(np.uint32)
