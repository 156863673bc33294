"""The binning primitive on the GPU against its numpy reference: counts, offsets, stable bin order."""

import numpy as np
import pytest

from addon.engine.primitives import binning
from addon.engine.reference.primitives import binning as ref
from addon.engine.reference.primitives import scan as ref_scan
from tests.gpu_fill import RANDOM_BYTE, expected, fill, upload


def bin_on_gpu(host, keys, bins, count=None, values=None, mode="AGGREGATED"):
    """Binning.run's (counts, offsets, items, sorted keys, total) and Binning.count's (counts, offsets, total)."""
    count = len(keys) if count is None else count
    texture = upload(host, "keys", keys, width=1000)
    b = binning.Binning(host, max(count, 1), bins)

    def ranges():
        return (host.read(b.counts).ravel()[:bins], host.read(b.offsets).ravel()[:bins], int(host.read(b.total)[0, 0]))

    b.count(texture, count, mode)
    histogram = ranges()
    b.run(texture, count, None if values is None else upload(host, "values", values, width=1000))
    counts, offsets, total = ranges()
    items = host.read(b.items).ravel()[:count]
    sorted_keys = host.read(b.keys).ravel()[:count]
    return (counts, offsets, items, sorted_keys, total), histogram


def check(host, keys, bins, mode="AGGREGATED"):
    keys = np.asarray(keys, dtype=np.uint32)
    (counts, offsets, items, sorted_keys, total), histogram = bin_on_gpu(host, keys, bins, mode=mode)
    want = ref.counts(keys, bins)
    for got in ((counts, offsets, total), histogram):
        np.testing.assert_array_equal(got[0], want)
        np.testing.assert_array_equal(got[1], ref_scan.scan(want))
        assert got[2] == int(want.sum())
    order = ref.order(keys, bins)
    np.testing.assert_array_equal(items, order)
    np.testing.assert_array_equal(sorted_keys, keys[order])


CASES = {
    "one bin": lambda rng, n: (np.zeros(n, np.uint32), 1),
    "all in one of many": lambda rng, n: (np.full(n, 17, np.uint32), 1000),
    "uniform 256": lambda rng, n: (rng.integers(0, 256, n), 256),
    "non power of two bins": lambda rng, n: (rng.integers(0, 300, n), 300),
    "more bins than items": lambda rng, n: (rng.integers(0, 100_000, n), 100_000),
    "beyond the shared table, clumpy": lambda rng, n: (np.where(rng.random(n) < 0.9, rng.integers(0, 50, n) * 997,
                                                     rng.integers(0, 70_000, n)), 70_000),
    "keys outside the bins": lambda rng, n: (rng.integers(0, 2**32, n, dtype=np.uint64) % 600, 500),
    "three digit passes": lambda rng, n: (rng.integers(0, 1 << 20, n), (1 << 20) + 3),
    "a 6-bit top digit": lambda rng, n: (rng.integers(0, 10_000, n), 10_000),
    "a 7-bit top digit, clumpy": lambda rng, n: (np.where(rng.random(n) < 0.9, 32_399, rng.integers(0, 32_400, n)),
                                                 32_400),
}


@pytest.mark.parametrize("count", [1, 2048, 6001])
@pytest.mark.parametrize("case", list(CASES))
def test_binning_matches_reference(host, rng, case, count):
    keys, bins = CASES[case](rng, count)
    check(host, keys, bins)


@pytest.mark.parametrize("bins", [binning.TABLE + 1, (1 << 20) + 3, binning.HASHED_BINS - 1, binning.HASHED_BINS])
@pytest.mark.parametrize("keys", ["all in one bin", "a few hot bins", "the last bin"])
def test_hashed_count_matches_reference(host, rng, bins, keys):
    """bin_count_hashed (TABLE < bins < HASHED_BINS) and the atomic per item past it.  Just under
    HASHED_BINS a count has 15 bits: 65,536 items of one bin in a workgroup pass half of them (16384)
    four times, and the key in the word above must not change."""
    count = 70_000  # two workgroups of bin_count_hashed
    pick = {"all in one bin": lambda: np.full(count, bins // 3),
            "a few hot bins": lambda: np.where(rng.random(count) < 0.9, rng.integers(0, 5, count) * (bins // 5),
                                               rng.integers(0, bins, count)),
            "the last bin": lambda: np.where(rng.random(count) < 0.5, bins - 1, rng.integers(0, bins + 9, count))}
    keys = pick[keys]().astype(np.uint32)
    assert binning.count_kernel("AGGREGATED", bins)[0].name == ("bin_count_hashed" if bins < binning.HASHED_BINS
                                                                 else "bin_count")
    counts, _, total = bin_on_gpu(host, keys, bins)[1]
    np.testing.assert_array_equal(counts, ref.counts(keys, bins))
    assert total == int(np.count_nonzero(keys < bins))


@pytest.mark.parametrize("mode", ["AGGREGATED", "NAIVE"])
def test_count_modes_agree(host, rng, mode):
    keys = np.where(rng.random(20_000) < 0.9, rng.integers(0, 3, 20_000), rng.integers(0, 5000, 20_000))
    counts = bin_on_gpu(host, keys, 5000, mode=mode)[1][0]
    np.testing.assert_array_equal(counts, ref.counts(keys, 5000))


def test_empty_input(host):
    (counts, offsets, items, _, total), histogram = bin_on_gpu(host, np.zeros(0, np.uint32), 10)
    assert not counts.any() and not offsets.any() and total == 0 and len(items) == 0
    assert not histogram[0].any() and not histogram[1].any() and histogram[2] == 0


def test_values_ride_along_and_runs_are_bitwise_equal(host, rng):
    keys = rng.integers(0, 40, 9000)
    values = rng.integers(0, 2**32, 9000, dtype=np.uint64).astype(np.uint32)
    first = bin_on_gpu(host, keys, 40, values=values)[0]
    np.testing.assert_array_equal(first[2], values[ref.order(keys, 40)])
    again = bin_on_gpu(host, keys, 40, values=values)[0]
    for a, b in zip(first[:4], again[:4]):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("limit", [0, 1, 2047, 2048, 4500, 6001, 10_000])
def test_a_limit_on_the_gpu_bins_the_first_items(host, rng, limit):
    """With ``limit`` (a total the GPU wrote) only the first min(count, limit) items are binned: as if
    count were that, whatever keys lie beyond (two digit passes; tiles wholly past the limit skip)."""
    count, bins = 6001, 8160
    keys = rng.integers(0, bins, count).astype(np.uint32)
    b = binning.Binning(host, count, bins)
    b.run(upload(host, "keys", keys, width=1000), count, limit=upload(host, "limit", [limit]))
    binned = keys[:min(count, limit)]
    want = ref.counts(binned, bins)
    np.testing.assert_array_equal(host.read(b.counts).ravel()[:bins], want)
    np.testing.assert_array_equal(host.read(b.offsets).ravel()[:bins], ref_scan.scan(want))
    assert int(host.read(b.total)[0, 0]) == len(binned)
    np.testing.assert_array_equal(host.read(b.items).ravel()[:len(binned)], ref.order(binned, bins))


def test_wave_match_needs_the_moderngl_host(host):
    with pytest.raises(Exception, match="cannot enable GLSL extensions"):
        host.compile(binning.bin_count_kernel("WAVE_MATCH"))


def test_digit_passes():
    """8 bits a pass; a narrower top digit takes the fewest of PASS_DIGITS that hold it."""
    assert [binning.pass_digits(8160, shift) for shift in binning.digit_shifts(8160)] == [256, 32]
    assert [binning.pass_digits(32_400, shift) for shift in binning.digit_shifts(32_400)] == [256, 128]
    assert binning.pass_digits(binning.ALL_KEYS, 24) == 256 and binning.pass_digits(1 << 24, 16) == 256
    assert binning.digit_shifts(1) == [0]
    assert binning.digit_shifts(256) == [0]
    assert binning.digit_shifts(257) == [0, 8]
    assert binning.digit_shifts(1 << 20) == [0, 8, 16]
    assert binning.digit_shifts(binning.ALL_KEYS) == [0, 8, 16, 24]
    with pytest.raises(ValueError):
        binning.digit_shifts(0)


@pytest.mark.slow
def test_two_to_the_24_items(host):
    """Counts and offsets past float32's exact integers.  (The stable scatter of 2^24 items takes
    ~30 s on llvmpipe; bench/binning_bench.py checks it against numpy on the GPU before timing.)"""
    count = 1 << 24
    keys_texture = host.texture("keys", 4096, 4096, "R32UI")
    fill(host, keys_texture, count, RANDOM_BYTE, seed=5)
    b = binning.Binning(host, 16, 257)  # 257 bins: bin 256 stays empty, its offset is the whole count
    b.count(keys_texture, count)
    want = np.bincount(expected(count, RANDOM_BYTE, seed=5).astype(np.uint8), minlength=257).astype(np.uint32)
    np.testing.assert_array_equal(host.read(b.counts).ravel()[:257], want)
    offsets = host.read(b.offsets).ravel()[:257]
    np.testing.assert_array_equal(offsets, ref_scan.scan(want))
    assert offsets[256] == count == int(host.read(b.total)[0, 0])
