"""Suites ``binning``, ``sort`` and ``scan``: the binning primitive and what is built on it, on the GPU.

    python3 bench/binning_bench.py            # the device run: 16M items, 100M scan (a few minutes)
    python3 bench/binning_bench.py --quick    # small sizes on llvmpipe: every path once, wall clock

Runs the engine's GLSL through moderngl (GL timer queries, median of --repeats
after a warm-up of at least 5 calls and 0.3 s), every result checked against
numpy before it is timed, peers in the same run:

* binning ``16M-{uniform,clumpy}[-64K|-1M]``: counting 16M keys into 256 /
  65536 / 2^20 bins, the product's aggregated count (a shared table per
  workgroup, one global atomic per workgroup and bin, up to 2048 bins; a
  shared hash table per 64K items beyond, bin_count_hashed) against one global atomic per item (peer
  "naive atomics"); ``wave_match_ms``: the seed's
  subgroup match (NVIDIA extension, moderngl only; None where it does not
  compile); ``full_ms``: count + offsets + the stable scatter of the item
  indices into bin order.  The zeroing of the counts (a host upload under
  moderngl) is outside every timing.  Clumpy: 90% of the items in 1% of the bins.
* sort ``full_radix``: 16M random key-index pairs, the radix sort on the
  binning's digit passes, against torch.sort of the float keys with indices;
  ``full_radix_tile4096``: the same with 4096-item tiles (48 KiB of shared
  memory: NVIDIA only).
* scan ``exclusive uint32 100,000,000``: scan.py against torch.cumsum, with
  the product's elements a thread (``scan.SCAN_RUN``, 4: the fastest on an H100) and, as
  `` run<n>`` cases, the other two of 4, 8 and 16.
* sort ``coherence_*`` (4M particles, 256^3 turbulence volume, one cell per
  voxel): the simulation's step in slot order, and after grid-cell ordering
  (``speedup``: the turbulence-lookup gain); the ordering's cost (key
  refresh, sort, state gather): today's full radix sort of the 32-bit keys
  (``coherence_order_radix``) against the counting sort by Morton cell, all
  three digit passes (``coherence_order_binned``, the product) or only the
  top one or two (a coarser order: ``coherence_order_binned_top1/top2``).

Records go to bench/results/<device>-<date>-<suite>.json (bench/records.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from addon.engine.order.sorting import KeyIndexPairs  # noqa: E402
from addon.engine.primitives import binning  # noqa: E402
from addon.engine.primitives.scan import linear_size  # noqa: E402
from addon.engine.reference.primitives import binning as reference  # noqa: E402
from addon.hosts.base import ShaderCompileError  # noqa: E402
from addon.hosts.moderngl import ModernGLHost  # noqa: E402
from bench import records  # noqa: E402
from bench.gl_timing import Timer  # noqa: E402
from bench.scan_bench import measure as measure_scan  # noqa: E402
from bench.sort_bench import ordered_keys, torch_sort_ms  # noqa: E402

BIN_COUNTS = {"": 256, "-64K": 1 << 16, "-1M": 1 << 20}


def bin_keys(rng, count: int, bins: int, clumpy: bool) -> np.ndarray:
    """Uniform keys, or 90% of them in 1% of the bins (at least one), the rest uniform."""
    keys = rng.integers(0, bins, count, dtype=np.uint32)
    if clumpy:
        hot = rng.choice(bins, max(1, round(bins / 100)), replace=False).astype(np.uint32)
        in_hot = rng.random(count) < 0.9
        keys[in_hot] = hot[rng.integers(0, len(hot), int(in_hot.sum()))]
    return keys


def upload(host, name: str, values: np.ndarray):
    width, rows = linear_size(len(values), host.max_texture_size)
    padded = np.zeros(width * rows, np.uint32)
    padded[: len(values)] = values
    return host.texture(name, width, rows, "R32UI", padded.reshape(rows, width))


def count_ms(host, timer, b, keys_texture, count, mode, want) -> float | None:
    """Median ms of one count in ``mode`` (None: the driver cannot compile it), checked first."""
    try:
        b.count(keys_texture, count, mode)
    except ShaderCompileError as error:
        print(f"{mode}: not available here ({str(error).splitlines()[-1]})")
        return None
    got = host.read(b.counts).ravel()[: b.bins]
    if not np.array_equal(got, want):
        raise SystemExit(f"{mode} count of {count:,} keys into {b.bins:,} bins disagrees with numpy")
    return timed(host, timer, lambda: b.add_counts(keys_texture, count, mode), setup=lambda: host.clear(b.counts))


def timed(host, timer, run, setup=None) -> float:
    """Median ms of ``run`` alone, ``setup`` (a host-side clear under moderngl) outside the timing."""
    for _ in range(timer.warmup):
        setup and setup()
        run()
    return records.gl_ms(host.ctx, run, timer.repeats, setup=setup)


def bench_binning(host, timer, count: int, rng, size_name: str) -> list[dict]:
    rows = []
    for shape in ("uniform", "clumpy"):
        for suffix, bins in BIN_COUNTS.items():
            keys = bin_keys(rng, count, bins, shape == "clumpy")
            keys_texture = upload(host, "keys", keys)
            b = binning.Binning(host, count, bins)
            want = reference.counts(keys, bins)
            ms = count_ms(host, timer, b, keys_texture, count, "AGGREGATED", want)
            naive = count_ms(host, timer, b, keys_texture, count, "NAIVE", want)
            wave = count_ms(host, timer, b, keys_texture, count, "WAVE_MATCH", want)
            b.run(keys_texture, count)
            if not np.array_equal(host.read(b.items).ravel()[:count], reference.order(keys, bins)):
                raise SystemExit(f"binning {count:,} {shape} keys into {bins:,} bins: the order disagrees with numpy")
            full = timed(host, timer, lambda b=b, k=keys_texture: b.run(k, count))
            rows.append({"case": f"{size_name}-{shape}{suffix}", "n": count, "bins": bins, "ms": ms,
                         "peer": "naive atomics", "peer_ms": naive, "speedup": naive / ms,
                         "wave_match_ms": wave, "full_ms": full, "digit_passes": len(b.passes.shifts)})
            keys_texture.native.release()
    return rows


def bench_sort(host, timer, count: int, repeats: int, rng) -> list[dict]:
    floats = rng.standard_normal(count).astype(np.float32)
    keys = ordered_keys(floats)
    peer = torch_sort_ms(floats, repeats)
    width, height = linear_size(count, host.max_texture_size)
    rows = []
    for tile in (binning.BIN_TILE, 4096):
        pairs = KeyIndexPairs(host, width, height, count)
        keys_texture, indices_texture = upload(host, "keys", keys), upload(host, "indices", np.arange(count))
        radix = binning.DigitPasses(host, count, binning.ALL_KEYS, tile)

        def sort(pairs=pairs, radix=radix, k=keys_texture, i=indices_texture):
            radix.run(k, i, pairs.keys, pairs.indices, count)  # from the unsorted pairs every time

        try:
            sort()
        except ShaderCompileError as error:
            print(f"radix tile {tile}: not available here ({str(error).splitlines()[-1]})")
            continue
        got_keys, got_indices = (host.read(t).ravel()[:count] for t in (pairs.keys, pairs.indices))
        if not (np.array_equal(got_keys, np.sort(keys)) and np.array_equal(got_indices, np.argsort(keys, kind="stable"))):
            raise SystemExit(f"radix sort of {count:,} keys (tile {tile}) disagrees with numpy")
        ms = timer.median(sort)[0]
        row = {"case": "full_radix" if tile == binning.BIN_TILE else f"full_radix_tile{tile}", "n": count, "ms": ms,
               "tile": tile, "passes": 4}
        if peer is not None:
            row.update(peer="torch.sort", peer_ms=peer, ratio=ms / peer)
        rows.append(row)
    return rows


def bench_coherence(host, timer, count: int, volume: int, rng) -> list[dict]:
    """Turbulence step in slot order vs grid-cell order, and what each way of ordering costs."""
    from addon.engine.order.sorting import ParticleSorter, SortKey
    from addon.engine.settings.settings import effect_settings
    from bench.sort_bench import state_system

    settings = effect_settings({"count": count, "turbulence_strength": 1.0, "turbulence_scale": 2.0,
                                "turbulence_resolution": volume, "gravity": (0.0, 0.0, 0.0), "drag": 0.0})
    positions = rng.uniform(-1, 1, (count, 3)).astype(np.float32)
    key = SortKey.grid_cell((-1.0, -1.0, -1.0), 2.0 / volume)  # one cell per voxel
    identity = np.identity(4)
    orders = {  # name: how the sorter's pairs are ordered before the gather
        "radix": lambda pairs: pairs.full_sort("RADIX"),
        "binned": lambda pairs: pairs.bin_sort(),
        "binned_top1": lambda pairs: pairs.bin_sort(shifts=(16,)),
        "binned_top2": lambda pairs: pairs.bin_sort(shifts=(8, 16)),
    }
    rows, unsorted = [], None
    for name, order in orders.items():
        system = state_system(host, count, positions, settings, life=1e4)
        step = lambda system=system: system.step(1 / 24, identity, identity)  # noqa: E731
        if unsorted is None:
            unsorted = timer.median(step)[0]
            rows.append({"case": "coherence_simulate_unsorted", "n": count, "ms": unsorted, "volume": volume})
        sorter = ParticleSorter(system, "DIRECT")

        def ordering(sorter=sorter, order=order):
            sorter.pairs.refresh_keys(sorter.system, key, reset_indices=True)
            order(sorter.pairs)
            sorter._gather()

        ordering()
        sorted_ms = timer.median(step)[0]
        cost = timer.median(ordering)[0]
        rows.append({"case": f"coherence_order_{name}", "n": count, "ms": cost, "volume": volume,
                     "step_ms": sorted_ms, "speedup": unsorted / sorted_ms})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke test of every path (llvmpipe)")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--suites", default="binning,sort,scan,coherence",
                        help="which to run (comma-separated): binning, sort (full radix), scan, coherence")
    parser.add_argument("--out", type=Path, default=None, help="results folder (default bench/results)")
    args = parser.parse_args()
    suites = set(args.suites.split(","))
    host = ModernGLHost()
    clock = "wall" if "llvmpipe" in host.device.lower() else "gl"
    repeats = 3 if args.quick else args.repeats
    timer = Timer(host.ctx, repeats, warmup=1 if args.quick else 5, clock=clock, warm_s=0.0 if args.quick else 0.3)
    rng = np.random.default_rng(12)
    count = 1 << (16 if args.quick else 24)
    size_name = "64K" if args.quick else "16M"
    if "binning" in suites:
        records.write("binning", host.device, bench_binning(host, timer, count, rng, size_name), results=args.out)
    if "sort" in suites:
        records.write("sort", host.device, bench_sort(host, timer, count, repeats, rng), results=args.out)
    if "scan" in suites:
        scan_size = 1_000_000 if args.quick else 100_000_000
        records.write("scan", host.device, [measure_scan(host, timer, scan_size, repeats, rng, run) for run in (4, 8, 16)],
                      results=args.out)
    if "coherence" in suites:
        coherence = (1 << 16, 64) if args.quick else (1 << 22, 256)
        records.write("sort", host.device, bench_coherence(host, timer, *coherence, rng), results=args.out)


if __name__ == "__main__":
    main()
