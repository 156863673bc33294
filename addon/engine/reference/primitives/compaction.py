"""Reference of compaction.py: keep-flags of live slots and their compacted index list."""

from __future__ import annotations

import numpy as np

from ..seam.state import alive


def keep_live(pos_age: np.ndarray, vel_life: np.ndarray) -> np.ndarray:
    return alive(pos_age, vel_life).astype(np.uint32)


def live_index(pos_age: np.ndarray, vel_life: np.ndarray) -> np.ndarray:
    return np.flatnonzero(keep_live(pos_age, vel_life)).astype(np.uint32)
