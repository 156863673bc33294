"""Hierarchical block scan on the GPU against the numpy reference (exact, uint32)."""

import numpy as np
import pytest

from addon.engine.primitives import scan
from addon.engine.reference.primitives import scan as ref_scan
from tests.gpu_fill import MAX, ONES, RANDOM, ZEROS, expected, fill

SMALL_RUN = 4  # 512-element blocks: the level boundaries below (512, 512^2, 512^3) come within reach


def run_scan(host, count, mode, inclusive, width=None, seed=7, run=SMALL_RUN):
    width, rows = (width, -(-count // width)) if width else scan.linear_size(count, 4096)
    values = host.texture("values", width, rows, "R32UI")
    out = host.texture("out", width, rows, "R32UI")
    total = host.texture("total", 1, 1, "R32UI")
    fill(host, values, count, mode, seed)
    scan.Scan(host, count, run).run(values, out, count, inclusive=inclusive, total=total)
    data = expected(count, mode, seed)
    return host.read(out).ravel()[:count], int(host.read(total)[0, 0]), data


@pytest.mark.parametrize("inclusive", [False, True])
@pytest.mark.parametrize(
    "count, mode",
    [
        (1, RANDOM), (2, ONES), (511, RANDOM), (512, RANDOM), (513, RANDOM),
        (1000, ZEROS), (4099, ONES), (262_143, RANDOM), (262_144, MAX), (262_145, RANDOM),
        (300_007, RANDOM),
    ],
)
def test_scan_matches_reference(host, count, mode, inclusive):
    got, total, data = run_scan(host, count, mode, inclusive)
    np.testing.assert_array_equal(got, ref_scan.scan(data, inclusive))
    assert total == ref_scan.total(data)


def test_scan_in_a_narrow_image_and_three_levels(host):
    """Elements wrap over rows of an odd width; 262,145 needs the third level."""
    assert len(scan.level_counts(262_145, 512)) == 3
    got, total, data = run_scan(host, 262_145, RANDOM, False, width=1000)
    np.testing.assert_array_equal(got, ref_scan.scan(data))
    assert total == ref_scan.total(data)


def test_uint32_wraparound(host):
    got, total, data = run_scan(host, 5000, MAX, True)
    assert got[1] == 0xFFFFFFFE and total == (5000 * 0xFFFFFFFF) % 2**32
    np.testing.assert_array_equal(got, ref_scan.scan(data, True))


def test_empty_scan_writes_a_zero_total(host):
    values = host.texture("values", 8, 8, "R32UI")
    total = host.texture("total", 1, 1, "R32UI")
    host.clear(total, 99)
    scan.Scan(host, 64).run(values, values, 0, total=total)
    assert host.read(total)[0, 0] == 0


def test_scan_refuses_more_than_capacity(host):
    values = host.texture("values", 8, 8, "R32UI")
    with pytest.raises(ValueError, match="capacity"):
        scan.Scan(host, 10).run(values, values, 64)


@pytest.mark.parametrize("count, dispatches", [(512, 1), (513, 2), (262_144, 2), (262_145, 4)])
def test_the_top_block_takes_no_dispatch_of_its_own(host, monkeypatch, count, dispatches):
    """Every level is reduced and scanned once, but the top block: the level under it sums its totals."""
    values = host.texture("values", *scan.linear_size(count, 4096), "R32UI")
    kernels = []
    dispatch = host.dispatch
    monkeypatch.setattr(host, "dispatch", lambda kernel, *args: (kernels.append(kernel.name), dispatch(kernel, *args)))
    scan.Scan(host, count, SMALL_RUN).run(values, values, count)
    assert len(kernels) == dispatches and kernels[-1] == "scan_block"


def test_level_counts():
    assert scan.level_counts(512, 512) == [512]
    assert scan.level_counts(512**2, 512) == [512**2, 512]
    assert len(scan.level_counts(512**3, 512)) == 3
    assert len(scan.level_counts(512**3 + 1, 512)) == 4
    assert scan.SCAN_BLOCK == 512 and len(scan.level_counts(512**2 + 1)) == 3


@pytest.mark.slow
def test_fourth_level(host):
    """512^3 + 1 elements: the first size that needs a fourth level."""
    count = 512**3 + 1
    got, total, data = run_scan(host, count, RANDOM, False, width=16384)
    assert total == ref_scan.total(data)
    reference = ref_scan.scan(data)
    np.testing.assert_array_equal(got, reference)


@pytest.mark.parametrize("run", [8, 16])
@pytest.mark.parametrize("count", [1, 2047, 2049, 300_007])
def test_longer_runs_per_thread(host, count, run):
    """The 8 and 16 elements a thread the benchmark times beside the product's 4 (scan.SCAN_RUN)."""
    got, total, data = run_scan(host, count, RANDOM, count % 2 == 1, run=run)
    np.testing.assert_array_equal(got, ref_scan.scan(data, count % 2 == 1))
    assert total == ref_scan.total(data)


def test_blocks_of_2048_where_they_save_a_level():
    """A scan takes 2048-element blocks (LONG_RUN) only where that needs fewer levels: two dispatches fewer."""
    assert [scan.fewest_levels_run(n) for n in (1, 512, 513, 262_144, 262_145, 4_194_304, 4_194_305, 10**8)] == \
        [4, 4, 16, 4, 16, 16, 4, 4]
