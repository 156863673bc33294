"""Experiment: where one radix pass of bin_scatter spends its GPU time (variants with parts removed).

    python3 bench/scatter_ablation.py [--n 16M]

Each variant is bin_scatter.glsl with one part cut out (results are wrong on
purpose; only the time matters), run as the scatter of a full 4-pass radix
sort of random keys under one GL timer query per pass.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from addon.engine import binning  # noqa: E402
from addon.engine.scan import linear_size  # noqa: E402
from addon.engine.sorting import KeyIndexPairs  # noqa: E402
from addon.hosts.moderngl import ModernGLHost  # noqa: E402
from bench import records  # noqa: E402
from bench.binning_bench import upload  # noqa: E402
from bench.sort_bench import ordered_keys  # noqa: E402

OUT_TEXEL = "ivec2 texel = particle_texel(int(s_base[bin_digit(key)] + uint(j)), out_width);"
COALESCED = "ivec2 texel = particle_texel(tile * BIN_TILE + j, out_width);"

VARIANTS = {
    "current": [],
    "coalesced_out": [(OUT_TEXEL, COALESCED)],
    "no_out": [(OUT_TEXEL, COALESCED),
               ("if (j < tile_items) {\n      uint key = s_keys(j);",
                "if (j < tile_items && s_keys(j) == 0x12345678u && s_values(j) == 0x9abcdefu) {\n      uint key = s_keys(j);")],
}


def variant_kernel(name: str, edits):
    source = (ROOT / "shaders" / "bin_scatter.glsl").read_text()
    for old, new in edits:
        if old not in source:
            raise SystemExit(f"variant {name}: the text to replace is gone from bin_scatter.glsl")
        source = source.replace(old, new)
    file_name = f"bin_scatter_ablate_{name}"
    (ROOT / "shaders" / f"{file_name}.glsl").write_text(source)
    return dataclasses.replace(binning.bin_scatter_kernel(), name=file_name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1 << 24)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--tiles", default="2048,4096", help="items a workgroup scatters (4096: NVIDIA only)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    host = ModernGLHost()
    rng = np.random.default_rng(1)
    count = args.n
    keys = upload(host, "keys", ordered_keys(rng.standard_normal(count).astype(np.float32)))
    indices = upload(host, "indices", np.arange(count))
    pairs = KeyIndexPairs(host, *linear_size(count, host.max_texture_size), count)
    rows = []
    try:
        for tile in (int(t) for t in args.tiles.split(",")):
            radix = binning.DigitPasses(host, count, binning.ALL_KEYS, tile)
            for name, edits in VARIANTS.items():
                radix.scatter_kernel = dataclasses.replace(variant_kernel(name, edits), defines=radix.scatter_kernel.defines,
                                                           shared=radix.scatter_kernel.shared)
                scatter_ms = []
                original = host.dispatch

                def timed(kernel, *rest, scatter_ms=scatter_ms, original=original, radix=radix):
                    if kernel is not radix.scatter_kernel:
                        return original(kernel, *rest)
                    query = host.ctx.query(time=True)
                    with query:
                        original(kernel, *rest)
                    scatter_ms.append(query)
                    return None

                host.dispatch = timed
                for _ in range(3):
                    radix.run(keys, indices, pairs.keys, pairs.indices, count)
                host.finish()
                scatter_ms.clear()
                totals = []
                for _ in range(args.repeats):
                    total = records.gl_ms(host.ctx, lambda radix=radix: radix.run(keys, indices, pairs.keys, pairs.indices, count), 1)
                    totals.append(total)
                host.finish()
                per_pass = statistics.median(q.elapsed / 1e6 for q in scatter_ms)
                host.dispatch = original
                rows.append({"case": f"tile{tile}/{name}", "n": count, "scatter_pass_ms": per_pass,
                             "sort_ms": statistics.median(totals)})
    finally:
        for path in (ROOT / "shaders").glob("bin_scatter_ablate_*.glsl"):
            path.unlink()
    records.write("scatter-ablation", host.device, rows, args.out)


if __name__ == "__main__":
    main()
