"""Reference of scan.py: uint32 prefix sums with wraparound, inclusive or exclusive."""

from __future__ import annotations

import numpy as np


def scan(values, inclusive: bool = False) -> np.ndarray:
    """What ``Scan.run`` writes (uint32, modulo 2^32)."""
    values = np.asarray(values, dtype=np.uint32).ravel()
    inclusive_sums = np.cumsum(values, dtype=np.uint64).astype(np.uint32)  # low 32 bits = wrapped sum
    if inclusive:
        return inclusive_sums
    return np.concatenate([[np.uint32(0)], inclusive_sums[:-1]]).astype(np.uint32)


def total(values) -> int:
    return int(np.sum(np.asarray(values, dtype=np.uint64)) % 2**32)
