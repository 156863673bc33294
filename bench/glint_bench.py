"""Suite ``glints``: the seed's four bright-point layouts, and the whole glint stage, at 1080p and 4K.

    .venv/bin/python bench/glint_bench.py --out $OUT  # on the GPU machine (after `source /tmp/bgpu/env`)
    .venv/bin/python bench/glint_bench.py --quick    # here, on llvmpipe: small frames, a smoke test

Runs the product's kernels (``addon.engine.draw.glints``) through
``addon.hosts.moderngl.ModernGLHost`` on an EGL context, so the GLSL is
Blender's byte for byte, timed with GL timer queries (host clock around
``ctx.finish()`` on llvmpipe, whose queries do not see compute work).

The frame is an HDR RGBA32F image: a dim random background (luminance below
the threshold) and ``--bright`` of its pixels lit up to 20, so about
1 - (1 - bright)^64 of the 8x8 tiles append a point.  Per size:

* ``<height>p-<layout>``: one extraction dispatch (the counter is reset
  outside the timing), median of ``--repeats``; the peer is the seed's own
  figure at 1080p on its GPU (360 / 900 / 200 / 110 us).  Every layout's
  list is first checked against the numpy reference (``check`` in the row).
* ``<height>p-stage``: extract (the layout the product picks for this GPU) +
  sprites (stars, 4% of the height long) + adding the layer to the frame,
  under one query: what a frame pays.

Records go to ``bench/results/<device>-<date>-glints.json`` (``bench/records.py``).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from addon.engine.draw import glints  # noqa: E402
from addon.engine.reference.draw import glints as reference  # noqa: E402
from addon.engine.settings.settings import render_settings  # noqa: E402
from addon.hosts.moderngl import ModernGLHost  # noqa: E402
from bench import records  # noqa: E402
from bench.gl_timing import Timer  # noqa: E402

THRESHOLD = 1.0
SIZES = [(1920, 1080), (3840, 2160)]
QUICK_SIZES = [(480, 270), (960, 540)]


def hdr_frame(width, height, bright, rng):
    frame = np.empty((height, width, 4), np.float32)
    frame[..., :3] = rng.random((height, width, 3), dtype=np.float32) * 0.9
    frame[..., 3] = 1.0
    spots = rng.random((height, width)) < bright
    frame[spots, :3] = rng.random((int(spots.sum()), 3), dtype=np.float32) * 20.0
    return frame


def median_ms(timer, run, setup):
    """Median ms of ``run()`` under the timer's query, ``setup()`` outside it; warmed up as Timer does."""
    start, calls = time.perf_counter(), 0
    while calls < timer.warmup or time.perf_counter() - start < timer.warm_s:
        setup()
        run()
        calls += 1
    timer.ctx.finish()
    query, samples = timer.queries[0], []
    for _ in range(timer.repeats):
        setup()
        with query:
            run()
        samples.append(query.elapsed / 1e6)
    return float(np.median(samples))


def measure_size(host, timer, width, height, bright, rng, log):
    frame = hdr_frame(width, height, bright, rng)
    texture = host.texture("frame", width, height, "RGBA32F", frame)
    want = reference.extract(frame, THRESHOLD).as_set()
    tiles = glints.tiles(width, height)
    rows = []
    for name, kernel in glints.EXTRACT_VARIANTS.items():
        stage = glints.GlintStage(host, width, height, render_settings(), kernel)
        stage.extract(texture, THRESHOLD)
        got = stage.read_points().as_set()
        check = "PASS" if got == want else f"FAIL ({len(got ^ want)} points differ)"
        ms = median_ms(timer, lambda stage=stage: stage.extract(texture, THRESHOLD), lambda: None)
        row = {"case": f"{height}p-{name}", "n": width * height, "width": width, "height": height, "ms": ms,
               "points": len(want), "tiles": tiles[0] * tiles[1], "check": check, "clock": timer.clock,
               "gb_per_s": 16 * width * height / (ms * 1e6), "local_size": list(kernel.local_size)}
        if (width, height) == (1920, 1080):
            row.update(peer="seed article, its GPU", peer_ms=glints.SEED_US_1080P[name] / 1000)
        rows.append(row)
        log(f"{row['case']:22s} {ms * 1000:9.1f} us  {check}")
        release(stage)
    stage = glints.GlintStage(host, width, height, render_settings({"glints": "STAR", "glint_threshold": THRESHOLD}))
    ms = median_ms(timer, lambda: stage.apply(texture), lambda: None)
    layout = next(name for name, kernel in glints.EXTRACT_VARIANTS.items() if kernel is stage.extract_kernel)
    rows.append({"case": f"{height}p-stage", "n": width * height, "width": width, "height": height, "ms": ms,
                 "points": len(want), "clock": timer.clock, "layout": layout,
                 "note": "extract + star sprites + add to the frame"})
    log(f"{height}p-stage{'':13s} {ms * 1000:9.1f} us  ({len(want):,} points)")
    release(stage)
    texture.native.release()
    return rows


def release(stage):
    for texture in (stage.list, stage.layer):
        texture.native.release()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small frames and few repeats (llvmpipe smoke test)")
    parser.add_argument("--repeats", type=int, help="timed runs per case (default 30, quick 3)")
    parser.add_argument("--bright", type=float, default=0.002, help="share of pixels above the threshold")
    parser.add_argument("--out", help="also copy the JSON records here (e.g. $OUT on the device machine)")
    args = parser.parse_args(argv)
    host = ModernGLHost()
    clock = "wall" if "llvmpipe" in host.device.lower() else "gl"
    repeats = args.repeats or (3 if args.quick else 30)
    timer = Timer(host.ctx, repeats, warmup=1 if args.quick else 5, clock=clock,
                  warm_s=0.0 if clock == "wall" else 0.3)
    print(f"GL: {host.device} | clock {clock} | median of {repeats}", flush=True)
    rng = np.random.default_rng(13)
    rows = []
    for width, height in QUICK_SIZES if args.quick else SIZES:
        rows += measure_size(host, timer, width, height, args.bright, rng, lambda *a: print(*a, flush=True))
    path = records.write("glints", host.device, rows)
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(args.out) / path.name)
    failed = [r["case"] for r in rows if r.get("check", "PASS") != "PASS"]
    print("checks: " + ("PASS" if not failed else f"FAIL ({', '.join(failed)})"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
