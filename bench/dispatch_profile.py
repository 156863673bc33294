"""Suite ``dispatch-profile``: GPU time of every kernel inside the engine's multi-dispatch stages.

    python3 bench/dispatch_profile.py            # the device run (moderngl, GL timer queries)
    python3 bench/dispatch_profile.py --quick    # small sizes on llvmpipe: every workload once

The whole-stage benches (binning_bench, sprite_bench) time a stage under one
query; this one wraps the host's ``dispatch`` and ``draw`` so that each call
gets its own GL timer query (GL queries do not nest), runs each workload
RUNS times after a warm-up, and takes each kernel's GPU time a run (summed
over its calls), the median of the runs: where a radix pass,
a scan or the sprite compositor spends its time.  Workloads: the radix sort
of 16M key-index pairs, a scan of 100M uint32, binning 16M keys into 64K
bins, the sprite layer at 1080p with 1M and 4M sprites (sprite_bench's
scene), and a frame's step of 100K fluid particles, 100K birds (the
interactions suite's peer cases) and 1M fluid particles.  One record per
(workload, kernel): ``ms`` (that kernel's GPU time in a run of the workload,
the median of the runs), ``calls`` and ``share`` of the workload's total.

Records go to bench/results/<device>-<date>-dispatch-profile.json (bench/records.py).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from addon.engine.draw import compositing  # noqa: E402
from addon.engine.draw.frame_resources import FrameResources  # noqa: E402
from addon.engine.draw.sprites import SpriteLayer  # noqa: E402
from addon.engine.order.sorting import KeyIndexPairs  # noqa: E402
from addon.engine.primitives import binning  # noqa: E402
from addon.engine.primitives.scan import Scan, linear_size  # noqa: E402
from addon.engine.settings.settings import render_settings  # noqa: E402
from addon.hosts.moderngl import ModernGLHost  # noqa: E402
from bench import records  # noqa: E402
from bench.binning_bench import bin_keys, upload  # noqa: E402
from bench.interaction_peers import DT, IDENTITY, peer_system  # noqa: E402
from bench.sort_bench import ordered_keys  # noqa: E402
from bench.sprite_bench import smoke_system  # noqa: E402

RUNS = 9  # runs of a workload a profile takes the median of


class QueryPerCall:
    """The host's dispatch and draw, each inside its own GL timer query while ``recording``."""

    def __init__(self, host):
        self.host, self.recording, self.queries = host, False, []
        for method in ("dispatch", "draw"):
            setattr(host, method, self._timed(getattr(host, method)))

    def _timed(self, call):
        def timed(kernel, *args, **kwargs):
            if not self.recording:
                return call(kernel, *args, **kwargs)
            query = self.host.ctx.query(time=True)
            with query:
                result = call(kernel, *args, **kwargs)
            self.queries.append((kernel.name, query))
            return result
        return timed

    def profile(self, work, warmup_s: float = 0.5, runs: int = RUNS) -> dict[str, tuple[float, int]]:
        """{kernel: (GPU ms summed over its calls in one ``work()``, the median of ``runs`` runs; calls)} after
        ``warmup_s`` of runs (a GPU idle before the first workload starts at low clocks): one run's small
        dispatches vary by 2-5x (H200, 2026-12-02)."""
        began = time.perf_counter()
        while time.perf_counter() - began < warmup_s:
            work()
            self.host.finish()
        sums: dict[str, list[float]] = defaultdict(list)
        calls: dict[str, int] = {}
        for _ in range(runs):
            self.queries, self.recording = [], True
            try:
                work()
                self.host.finish()
            finally:
                self.recording = False
            run = defaultdict(lambda: [0.0, 0])
            for name, query in self.queries:
                run[name][0] += query.elapsed / 1e6
                run[name][1] += 1
            for name, (ms, count) in run.items():
                sums[name].append(ms)
                calls[name] = count
        return {name: (statistics.median(values), calls[name]) for name, values in sums.items()}


def radix_sort(host, count: int, rng, tile: int = binning.BIN_TILE):
    keys = ordered_keys(rng.standard_normal(count).astype(np.float32))
    width, height = linear_size(count, host.max_texture_size)
    pairs = KeyIndexPairs(host, width, height, count)
    keys_texture, indices_texture = upload(host, "keys", keys), upload(host, "indices", np.arange(count))
    radix = binning.DigitPasses(host, count, binning.ALL_KEYS, tile)
    return lambda: radix.run(keys_texture, indices_texture, pairs.keys, pairs.indices, count)


def scan(host, count: int, rng):
    values = upload(host, "values", rng.integers(0, 8, count, dtype=np.uint32))
    width, height = linear_size(count, host.max_texture_size)
    out = host.texture("scanned", width, height, "R32UI")
    scanner = Scan(host, count)
    return lambda: scanner.run(values, out, count)


def binned(host, count: int, bins: int, rng):
    keys = upload(host, "bin_keys", bin_keys(rng, count, bins, clumpy=False))
    b = binning.Binning(host, count, bins)
    return lambda: b.run(keys, count)


def sprites(host, count: int, width: int, height: int, rng):
    system = smoke_system(host, count, width, height, rng)
    compositor = compositing.Compositor(FrameResources(host, width, height), render_settings())
    camera = compositing.Camera.pixel_grid(width, height)
    layer = SpriteLayer(host, width, height)
    layer.draw([system], compositor.resources, camera)  # lists grown to fit
    layer.check_every = 1 << 30  # the viewport's way: no read-back of the total
    return lambda: layer.draw([system], compositor.resources, camera)


def interaction_step(host, count: int, interaction: str):
    """A frame's step of the interactions suite's peer case (bench/interaction_peers.py): where the GPU's time of a
    small effect's frame goes, kernel by kernel."""
    system = peer_system(host, count, interaction)
    system.step(DT, IDENTITY, IDENTITY)  # the burst
    return lambda: system.step(DT, IDENTITY, IDENTITY)


def workloads(host, quick: bool, rng) -> dict:
    """Each workload's maker by name (made when it runs: a run of a few keeps the others' memory)."""
    if quick:
        return {"radix-64K": lambda: radix_sort(host, 1 << 16, rng), "scan-1M": lambda: scan(host, 1 << 20, rng),
                "binning-64K-into-4K": lambda: binned(host, 1 << 16, 1 << 12, rng),
                "sprites-540p-20K": lambda: sprites(host, 20_000, 960, 540, rng),
                "fluid-1K-step": lambda: interaction_step(host, 1000, "FLUID")}
    return {"radix-16M": lambda: radix_sort(host, 1 << 24, rng),
            "radix-16M-tile4096": lambda: radix_sort(host, 1 << 24, rng, 4096),
            "scan-100M": lambda: scan(host, 100_000_000, rng),
            "binning-16M-into-64K": lambda: binned(host, 1 << 24, 1 << 16, rng),
            "sprites-1080p-1M": lambda: sprites(host, 1 << 20, 1920, 1080, rng),
            "sprites-1080p-4M": lambda: sprites(host, 1 << 22, 1920, 1080, rng),
            "fluid-100K-step": lambda: interaction_step(host, 100_000, "FLUID"),
            "flocking-100K-step": lambda: interaction_step(host, 100_000, "FLOCKING"),
            "fluid-1M-step": lambda: interaction_step(host, 1_000_000, "FLUID")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke test (llvmpipe)")
    parser.add_argument("--out", type=Path, default=None, help="results folder (default bench/results)")
    parser.add_argument("--workloads", default="", help="comma-separated names to run (default: all)")
    args = parser.parse_args()
    host = ModernGLHost()
    profiler = QueryPerCall(host)
    rows = []
    chosen = set(filter(None, args.workloads.split(",")))
    for workload, make in workloads(host, args.quick, np.random.default_rng(5)).items():
        if chosen and workload not in chosen:
            continue
        per_kernel = profiler.profile(make())
        total = sum(ms for ms, _ in per_kernel.values())
        for kernel, (ms, calls) in sorted(per_kernel.items(), key=lambda item: -item[1][0]):
            rows.append({"case": f"{workload}/{kernel}", "ms": ms, "calls": calls,
                         "share": ms / total if total else None, "workload_ms": total})
    records.write("dispatch-profile", host.device, rows, args.out)


if __name__ == "__main__":
    main()
