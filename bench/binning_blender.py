"""Suite ``binning`` inside Blender: the product host's counts, aggregated against naive atomics.

    .venv/bin/python bench/binning_blender.py [--quick]

Blender's Python API has no GPU timer queries, so this times on the host
clock between ``host.finish()`` calls (median of --repeats after a warm-up;
a dispatch's Python and driver cost, tens of microseconds, is included).
Keys are made on the GPU (Blender uploads float data only) from a hash of
the item index: uniform over the bins, or 90% of them in 1% of the bins;
counts are checked against numpy before timing.  Cases
``blender/16M-{uniform,clumpy}[-64K|-1M]`` beside bench/binning_bench.py's
moderngl ones.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from addon.engine.primitives import binning  # noqa: E402
from addon.engine.reference.seam.random import pcg_hash  # noqa: E402
from addon.engine.seam.kernels import Constant, Image, Kernel, _read  # noqa: E402
from addon.hosts.blender import BlenderHost  # noqa: E402
from bench import records  # noqa: E402
from bench.binning_bench import BIN_COUNTS  # noqa: E402

KEYS_SOURCE = """
void main()
{
  int i = int(gl_GlobalInvocationID.y) * 65535 * 256 + int(gl_GlobalInvocationID.x);
  if (i >= count) {
    return;
  }
  uint h = pcg_hash(uint(i));
  uint key = h % uint(bins);
  if (clumpy != 0 && pcg_hash(h) % 10u != 0u) {
    key = (pcg_hash(h ^ 0x9E3779B9u) % uint(hot)) * uint(bins / hot);
  }
  imageStore(keys, particle_texel(i, imageSize(keys).x), uvec4(key));
}
"""


@dataclass(frozen=True)
class KeysKernel(Kernel):
    def body(self) -> str:
        return "".join(_read(f) for f in self.includes) + KEYS_SOURCE

    def source_lines(self):
        return [("bench/binning_blender.py", n + 1) for n in range(self.body().count("\n"))]


MAKE_KEYS = KeysKernel(
    "bench_keys", images=(Image("keys", "R32UI", "WRITE"),),
    constants=(Constant("INT", "count"), Constant("INT", "bins"), Constant("INT", "hot"), Constant("INT", "clumpy")),
    includes=("common.glsl", "random.glsl"),
)


def expected_keys(count: int, bins: int, hot: int, clumpy: bool) -> np.ndarray:
    with np.errstate(over="ignore"):
        h = pcg_hash(np.arange(count, dtype=np.uint32))
        keys = h % np.uint32(bins)
        if clumpy:
            in_hot = pcg_hash(h) % np.uint32(10) != 0
            hot_keys = (pcg_hash(h ^ np.uint32(0x9E3779B9)) % np.uint32(hot)) * np.uint32(bins // hot)
            keys = np.where(in_hot, hot_keys, keys)
    return keys.astype(np.uint32)


def host_ms(host, run, setup, repeats: int) -> float:
    for _ in range(3):
        setup()
        run()
    samples = []
    for _ in range(repeats):
        setup()
        host.finish()
        start = time.perf_counter()
        run()
        host.finish()
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="64K keys: a smoke test (llvmpipe)")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    host = BlenderHost()
    count = 1 << (16 if args.quick else 24)
    size_name = "64K" if args.quick else "16M"
    keys = host.texture("keys", 4096, -(-count // 4096), "R32UI")
    rows = []
    for shape in ("uniform", "clumpy"):
        for suffix, bins in BIN_COUNTS.items():
            hot = max(1, round(bins / 100))
            groups = -(-count // 256)
            host.dispatch(MAKE_KEYS, (min(groups, 65535), -(-groups // 65535), 1), {"keys": keys},
                          {"count": count, "bins": bins, "hot": hot, "clumpy": int(shape == "clumpy")})
            want = np.bincount(expected_keys(count, bins, hot, shape == "clumpy"), minlength=bins)
            b = binning.Binning(host, 1, bins)
            times = {}
            for mode in ("AGGREGATED", "NAIVE"):
                b.count(keys, count, mode)
                if not np.array_equal(host.read(b.counts).ravel()[:bins], want):
                    raise SystemExit(f"{mode} count of {shape} keys into {bins:,} bins disagrees with numpy")
                times[mode] = host_ms(host, lambda b=b, mode=mode: b.add_counts(keys, count, mode),
                                      lambda b=b: host.clear(b.counts), args.repeats)
            rows.append({"case": f"blender/{size_name}-{shape}{suffix}", "n": count, "bins": bins,
                         "ms": times["AGGREGATED"], "peer": "naive atomics", "peer_ms": times["NAIVE"],
                         "speedup": times["NAIVE"] / times["AGGREGATED"], "clock": "host"})
    records.write("binning", host.device, rows)


if __name__ == "__main__":
    main()
