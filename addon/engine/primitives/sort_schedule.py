"""Pass schedules of Batcher's sorting networks, without a GPU.

A *pass* is one layer of disjoint compare-and-swaps; the GPU runs each pass as
one dispatch with one invocation per comparator.  Counts that are not a power
of two are sorted as if padded with +inf keys up to the next power of two: a
comparator whose upper element lies beyond the count would never swap (its
partner is +inf), so it is simply left out and the padding never exists.

The incremental sort (``SortStep`` of Sylvan's thesis, see README) walks the odd-even merge sort
schedule a few passes per frame and wraps around when it reaches the end; its
position is kept across frames.  Every comparator only ever swaps an inverted
pair, so no pass can increase the number of inversions: particles that moved
a little since the last frame stay nearly sorted at a fraction of a full sort.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_SORT_PASSES = 512  # passes per frame; a full sort of 2^28 keys takes 406


def stages(count: int) -> int:
    """log2 of the padded size: the number of merge stages."""
    return max(0, int(count - 1).bit_length())


def odd_even_merge_passes(count: int) -> list[tuple[int, int]]:
    """Every (p, k) pass of the odd-even merge sort of ``count`` keys, in order.

    p is the size of the sorted runs being merged (1, 2, 4, ...), k the stride
    of the pass's comparators (p, p/2, ..., 1).
    """
    passes = []
    p = 1
    while p < count:
        k = p
        while k >= 1:
            passes.append((p, k))
            k //= 2
        p *= 2
    return passes


def odd_even_merge_comparators(count: int, p: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) indices of the comparators of pass (p, k), upper < count.

    The same arithmetic as ``shaders/sort_network.glsl``: comparator t of the
    pass is found from t alone, so each GPU invocation owns one pair.
    """
    t = np.arange(comparator_slots(count, p, k), dtype=np.int64)
    if k == p:
        lower = (t // p) * 2 * p + t % p
    else:
        block, r = t // (p - k), t % (p - k)
        lower = block * 2 * p + k + (r // k) * 2 * k + r % k
    upper = lower + k
    keep = upper < count
    return lower[keep], upper[keep]


def comparator_slots(count: int, p: int, k: int) -> int:
    """Invocations a pass dispatches: comparators of the padded power-of-two size."""
    padded = 1 << stages(count)
    return padded // 2 if k == p else (padded // (2 * p)) * (p - k)


def bitonic_passes(count: int) -> list[tuple[int, int]]:
    """(size, stride) of every pass of the all-ascending bitonic sort.

    The first pass of each merge compares i with its mirror in the block
    (i ^ (size - 1)) instead of running half the blocks descending, so every
    comparator sorts upwards and the +inf padding can be left out.
    """
    return [(1 << s, 1 << j) for s in range(1, stages(count) + 1) for j in range(s - 1, -1, -1)]


def bitonic_comparators(count: int, size: int, stride: int) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) of pass (size, stride) of ``bitonic_passes``: the reference of the network the
    'BITONIC' full sort (sort_local, sort_merge) runs, checked by tests/engine/primitives/test_sort_schedule.py."""
    t = np.arange((1 << stages(count)) // 2, dtype=np.int64)
    lower = (t // stride) * 2 * stride + t % stride
    upper = lower ^ (size - 1) if stride * 2 == size else lower + stride
    keep = upper < count
    return lower[keep], upper[keep]


def apply_pass(keys: np.ndarray, lower: np.ndarray, upper: np.ndarray, *payload: np.ndarray) -> None:
    """Compare-and-swap in place: swap where keys[lower] > keys[upper] (ties stay)."""
    swap = keys[lower] > keys[upper]
    lo, hi = lower[swap], upper[swap]
    for array in (keys, *payload):
        array[lo], array[hi] = array[hi], array[lo].copy()


@dataclass
class SortStep:
    """Resumable position in the odd-even merge sort schedule of ``count`` keys.

    ``take(n)`` returns the next n passes and advances, wrapping around to the
    first pass after the last; ``reset()`` starts over (new particles, a new
    count, or a camera cut that runs a full sort instead).
    """

    count: int
    position: int = 0

    def __post_init__(self):
        self._passes = odd_even_merge_passes(self.count)

    @property
    def passes(self) -> list[tuple[int, int]]:
        return self._passes

    def take(self, n: int) -> list[tuple[int, int]]:
        if not 0 <= n <= MAX_SORT_PASSES:
            raise ValueError(f"passes per frame must be between 0 and {MAX_SORT_PASSES}, not {n}")
        if not self._passes:
            return []
        taken = [self._passes[(self.position + i) % len(self._passes)] for i in range(n)]
        self.position = (self.position + n) % len(self._passes)
        return taken

    def reset(self, count: int | None = None) -> None:
        if count is not None and count != self.count:
            self.count = count
            self._passes = odd_even_merge_passes(count)
        self.position = 0


def inversions(keys: np.ndarray) -> int:
    """Pairs i < j with keys[i] > keys[j] (merge-sort count, O(n log n))."""
    def count(a):
        if len(a) <= 1:
            return a, 0
        mid = len(a) // 2
        left, x = count(a[:mid])
        right, y = count(a[mid:])
        merged = np.concatenate([left, right])
        order = np.argsort(merged, kind="stable")
        # For each right element: left elements greater than it.
        z = int(np.sum(len(left) - np.searchsorted(left, right, side="right")))
        return merged[order], x + y + z
    return count(np.asarray(keys))[1]


def adjacent_in_order(keys: np.ndarray) -> float:
    """Fraction of adjacent pairs with keys[i] <= keys[i + 1] (1.0 for fewer than two keys)."""
    keys = np.asarray(keys)
    if len(keys) < 2:
        return 1.0
    return float(np.mean(keys[:-1] <= keys[1:]))
