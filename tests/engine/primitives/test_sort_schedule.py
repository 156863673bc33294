"""The sorting networks' pass schedules, without a GPU."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from addon.engine.primitives import sort_schedule as ss


def run_network(keys, passes, comparators):
    keys = np.array(keys)
    for a, b in passes:
        ss.apply_pass(keys, *comparators(len(keys), a, b))
    return keys


@pytest.mark.parametrize("count", [0, 1, 2, 3, 5, 8, 13, 16, 31, 64, 100, 257, 1000])
@pytest.mark.parametrize("network", ["odd_even_merge", "bitonic"])
def test_networks_sort(rng, count, network):
    passes = getattr(ss, f"{network}_passes")(count)
    comparators = getattr(ss, f"{network}_comparators")
    for keys in (rng.random(count), rng.integers(0, 3, count), np.arange(count)[::-1], np.zeros(count)):
        np.testing.assert_array_equal(run_network(keys, passes, comparators), np.sort(keys))


@pytest.mark.parametrize("count", [2, 3, 4, 6, 7, 8])
def test_odd_even_merge_sorts_every_0_1_input(count):
    """The 0-1 principle: a network that sorts every 0/1 sequence sorts everything."""
    passes = ss.odd_even_merge_passes(count)
    for bits in itertools.product((0, 1), repeat=count):
        assert list(run_network(bits, passes, ss.odd_even_merge_comparators)) == sorted(bits)


@pytest.mark.parametrize("count", [2, 8, 1000, 1 << 12])
def test_passes_are_disjoint_and_in_range(count):
    for p, k in ss.odd_even_merge_passes(count):
        lower, upper = ss.odd_even_merge_comparators(count, p, k)
        touched = np.concatenate([lower, upper])
        assert len(np.unique(touched)) == len(touched)
        assert (lower < upper).all() and (upper < count).all()
        assert len(lower) <= ss.comparator_slots(count, p, k)


def test_schedule_length():
    assert ss.odd_even_merge_passes(1) == []
    assert len(ss.odd_even_merge_passes(1 << 20)) == 210
    assert len(ss.odd_even_merge_passes(1 << 28)) <= ss.MAX_SORT_PASSES


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-5, 5) | st.floats(-1e3, 1e3), min_size=0, max_size=70), st.integers(0, 400))
def test_every_incremental_pass_never_adds_inversions(keys, start):
    keys = np.array(keys, dtype=np.float64)
    step = ss.SortStep(len(keys))
    step.take(start % 64)
    before = ss.inversions(keys)
    for _ in range(len(step.passes) + 3):
        for p, k in step.take(1):
            ss.apply_pass(keys, *ss.odd_even_merge_comparators(len(keys), p, k))
        after = ss.inversions(keys)
        assert after <= before
        before = after


def test_sort_step_resumes_across_frames_and_wraps():
    step = ss.SortStep(100)
    full = step.passes
    taken = step.take(5) + step.take(0) + step.take(7)
    assert taken == full[:12]
    rest = step.take(len(full) - 12)
    assert taken + rest == full
    assert step.take(3) == full[:3], "wraps to the first pass"
    step.reset()
    assert step.take(2) == full[:2]
    step.reset(count=10)
    assert step.take(len(ss.odd_even_merge_passes(10))) == ss.odd_even_merge_passes(10)


def test_frames_of_incremental_passes_converge_to_sorted(rng):
    keys = rng.random(300)
    step = ss.SortStep(len(keys))
    for _ in range(len(step.passes) // 7 + 1):
        for p, k in step.take(7):
            ss.apply_pass(keys, *ss.odd_even_merge_comparators(len(keys), p, k))
    assert ss.adjacent_in_order(keys) == 1.0


@pytest.mark.parametrize("bad", [-1, ss.MAX_SORT_PASSES + 1])
def test_sort_step_refuses_bad_pass_counts(bad):
    with pytest.raises(ValueError, match="passes per frame"):
        ss.SortStep(10).take(bad)


def test_inversions_and_adjacent_metric():
    assert ss.inversions(np.array([3, 1, 2])) == 2
    assert ss.inversions(np.array([1, 1, 1])) == 0
    assert ss.inversions(np.arange(10)[::-1]) == 45
    assert ss.adjacent_in_order(np.array([1, 2, 2, 0])) == pytest.approx(2 / 3)
    assert ss.adjacent_in_order(np.array([5])) == 1.0


@pytest.mark.parametrize("count", [2, 3, 100, 4096, 5003, 1 << 16])
@pytest.mark.parametrize(("block", "fused"), [(2, 1), (64, 1), (64, 3), (1024, 2), (4096, 3)])
def test_full_sort_dispatches_cover_the_bitonic_network(count, block, fused):
    """The grouped dispatches run exactly bitonic_passes, in order."""
    from addon.engine.order.sorting import full_sort_dispatches

    covered = []
    padded = 1 << ss.stages(count)
    for kernel, _, constants in full_sort_dispatches(count, block, fused):
        if kernel.name == "sort_local":
            size = constants["merge_size"]
            sizes = [1 << s for s in range(1, (min(block, padded)).bit_length())] if size == 0 else [size]
            covered += [(s, j) for s in sizes for j in (1 << t for t in range((min(s, block) // 2).bit_length() - 1, -1, -1))]
        else:
            n = int(kernel.defines[0][1])
            covered += [(constants["size"], constants["stride"] >> r) for r in range(n)]
    assert covered == ss.bitonic_passes(count)
