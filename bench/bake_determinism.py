"""Are bakes deterministic on this GPU?  A preset baked whole several times and once split in two through the
simulation cache (as a farm splits a shot): every bake's frames against the first whole bake's, byte for byte.

    .venv/bin/python bench/bake_determinism.py --presets comet --bakes 4 [--res 64x36 --count 4000 --frames 1-16]
    .venv/bin/python bench/bake_determinism.py --quick     # here, on llvmpipe: two small bakes and a split

Suite ``determinism``, a case per preset (and glint setting, ``--glints``): ``bakes`` (whole bakes), ``frames``,
``differing`` (frames of the later whole bakes that differ from the first's), ``split_differing`` (frames of the
split bake that do), and which ones (``names``).  0 and 0 is the goal.  The test suite bakes a split comet once
(``tests/engine/simulate/test_trails.py``); this repeats bakes to catch what is rare (a sum whose order the GPU picks).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import records  # noqa: E402


def bake(preset: str, out: Path, frames: str, shot: str, args, cache: Path | None = None) -> None:
    """One CLI bake of ``frames`` of the shot (through ``cache`` when given, so a later part resumes there)."""
    command = [sys.executable, "-m", "addon.cli", "bake", "--preset", preset, "--res", args.res, "--count",
               str(args.count), "--shot", shot, "--frames", frames, "--out", str(out),
               *(["--glints", args.glints] if args.glints else []), *(["--cache", str(cache)] if cache else [])]
    result = subprocess.run(command, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
                            text=True)
    if result.returncode != 0:
        raise SystemExit(f"bake failed: {' '.join(command)}\n{result.stderr[-2000:]}")


def differing(first: Path, other: Path) -> list[str]:
    """Frames of ``other`` whose bytes differ from ``first``'s (a frame missing from ``other`` counts)."""
    return [frame.name for frame in sorted(first.glob("*.png"))
            if not (other / frame.name).exists() or (other / frame.name).read_bytes() != frame.read_bytes()]


def measure(preset: str, args) -> dict:
    first, last = map(int, args.frames.split("-"))
    middle = (first + last) // 2
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        for k in range(args.bakes):
            bake(preset, folder / f"whole{k}", args.frames, args.frames, args)
        bake(preset, folder / "split", f"{first}-{middle}", args.frames, args, folder / "cache")
        bake(preset, folder / "split", f"{middle + 1}-{last}", args.frames, args, folder / "cache")
        whole = sorted({name for k in range(1, args.bakes) for name in differing(folder / "whole0",
                                                                                  folder / f"whole{k}")})
        split = differing(folder / "whole0", folder / "split")
        frames = len(list((folder / "whole0").glob("*.png")))
    return {"case": f"{preset}-{args.glints.lower()}" if args.glints else preset, "bakes": args.bakes,
            "frames": frames, "differing": len(whole), "split_differing": len(split),
            "names": " ".join(whole + [f"split:{name}" for name in split]), "res": args.res, "count": args.count}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presets", default="comet", help="comma-separated presets")
    parser.add_argument("--bakes", type=int, default=4, help="whole bakes of each (the first is the reference)")
    parser.add_argument("--frames", default="1-16", help="the shot, first-last; the split bake cuts it in half")
    parser.add_argument("--res", default="64x36")
    parser.add_argument("--count", type=int, default=4000)
    parser.add_argument("--glints", choices=("NONE", "STAR", "FLARE"), help="override the preset's glints")
    parser.add_argument("--quick", action="store_true", help="two bakes of 4 frames at 32x18 with 500 particles")
    parser.add_argument("--out", type=Path, help="results folder (default bench/results/)")
    args = parser.parse_args(argv)
    if args.quick:
        args.bakes, args.frames, args.res, args.count = 2, "1-4", "32x18", 500
    if args.bakes < 1:
        parser.error("--bakes must be at least 1")
    from addon.hosts.blender import BlenderHost

    rows = [measure(preset, args) for preset in args.presets.split(",")]
    records.write("determinism", BlenderHost().device, rows, results=args.out)
    return 1 if any(row["differing"] or row["split_differing"] for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
