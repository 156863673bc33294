"""Suite ``scan``: the hierarchical block scan of uint32 in R32UI images, against torch.cumsum.

    python3 bench/scan_bench.py [--sizes 10000000,100000000] [--repeats 20]

Runs the engine's GLSL through moderngl (the GPU machine has no Blender) and,
where torch sees a CUDA device, ``torch.cumsum`` of the same int32 values on the
same GPU as the peer.  The result is checked against numpy before timing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from addon.engine.primitives.scan import SCAN_RUN, Scan  # noqa: E402
from addon.engine.reference.primitives.scan import scan as reference_scan  # noqa: E402
from addon.hosts.moderngl import ModernGLHost  # noqa: E402
from bench import records  # noqa: E402
from bench.gl_timing import Timer  # noqa: E402

WIDTH = 16384  # 100M uint32 -> 16384 x 6104


def torch_ms(values: np.ndarray, repeats: int) -> float | None:
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    x = torch.from_numpy(values.view(np.int32)).cuda()
    for _ in range(10):  # warm-up, as for our kernels (clocks ramp up from idle)
        torch.cumsum(x, 0, dtype=torch.int32)
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.cumsum(x, 0, dtype=torch.int32)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return float(np.median(times))


def measure(host, timer, n: int, repeats: int, rng, run: int = SCAN_RUN) -> dict:
    """One size: check against numpy, then time the scan (``run`` elements a thread) and its peer."""
    width = min(WIDTH, n)
    height = -(-n // width)
    values = rng.integers(0, 2**32, width * height, dtype=np.uint32)
    src = host.texture("values", width, height, "R32UI", values.reshape(height, width))
    out = host.texture("out", width, height, "R32UI")
    total = host.texture("total", 1, 1, "R32UI")
    scan = Scan(host, n, run)
    scan.run(src, out, n, total=total)
    if not np.array_equal(host.read(out).ravel()[:n], reference_scan(values[:n])):
        raise SystemExit(f"scan of {n:,} disagrees with numpy")
    ms = timer.together(lambda: scan.run(src, out, n, total=total))
    peer_ms = torch_ms(values[:n], repeats)
    variant = "" if run == SCAN_RUN else f" run{run}"
    row = {"case": f"exclusive uint32 {n:,}{variant}", "n": n, "ms": ms, "elements_per_s": n / (ms / 1e3), "run": run}
    if peer_ms is not None:
        row.update(peer="torch.cumsum", peer_ms=peer_ms, ratio=ms / peer_ms)
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000000,100000000")
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    host = ModernGLHost()
    rng = np.random.default_rng(1)
    timer = Timer(host.ctx, args.repeats, warmup=5, clock="wall" if "llvmpipe" in host.device.lower() else "gl")
    rows = [measure(host, timer, int(n), args.repeats, rng) for n in args.sizes.split(",")]
    records.write("scan", host.device, rows)


if __name__ == "__main__":
    main()
