"""Reference of binning.py: counts, offsets and the stable bin order."""

from __future__ import annotations

import numpy as np

U = np.uint32


def bin_keys(keys, bins: int) -> np.ndarray:
    """Keys with every key outside the bins made ``bins`` (one group, kept last); ALL_KEYS (-1): unchanged."""
    keys = np.asarray(keys, dtype=U).ravel()
    if bins < 0:
        return keys.astype(np.uint64)
    return np.minimum(keys, bins).astype(np.uint64)


def counts(keys, bins: int) -> np.ndarray:
    keys = np.asarray(keys, dtype=U).ravel()
    return np.bincount(keys[keys < bins], minlength=bins).astype(U)


def order(keys, bins: int) -> np.ndarray:
    """Item indices in bin order, items of a bin (and those outside every bin, last) in item order."""
    return np.argsort(bin_keys(keys, bins), kind="stable").astype(U)
