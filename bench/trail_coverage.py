"""What the events suite's trails case asks of the GPU: pixel adds per frame (suite ``events``, case
``1080p-1M-trails32-coverage``).

``trail_splat.glsl`` (the atomic path, replaced by trails by screen tiles: ``addon/engine/draw/trail_tiles.py``) added
each segment of each trail into every pixel of its band with one pair of returning 32-bit atomics (two words a
pixel: no 64-bit atomics in Blender 5.2), so the case's floor on that path is its pixel adds over the GPU's rate
of scattered atomic pairs (``bench/gpu_splat.py``, case ``atomic_pair_scattered``); the tiled path sums the same
pixel adds without atomics, in the tiles' workgroups.
Here the comet preset (the case's effect) is stepped to frame 24 at ``--count`` particles with 32-point trails,
the segments the kernel draws come from the numpy reference (``reference.trails.ribbon_segments``), and each
segment on the target (by its middle) counts its band, its length times its widest width plus a pixel; the sum
scales with the count (each trail is its own), so it is given at 1M too.  Fields: ``segments``, ``pixel_adds``,
``pixel_adds_1m``, ``top10_share`` and ``top100_share`` (the adds in the 10 / 100 busiest 16x16 tiles),
``pairs_per_s`` when given (the device's measured rate) with ``floor_ms`` (``pixel_adds_1m`` at that rate).  Any
machine (the count is small).

    .venv/bin/python bench/trail_coverage.py --count 20000 [--pairs-per-s 3.3e10] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import records  # noqa: E402

WIDTH, HEIGHT, POINTS, FRAME = 1920, 1080, 32, 24


def coverage(count: int) -> dict:
    """The case's segments and pixel adds at ``count`` particles."""
    from bake_throughput import effect_scene

    from addon.engine.reference.simulate import trails as ref
    from addon.scene.renderer import SceneRenderer, camera_of

    with tempfile.TemporaryDirectory() as out:
        scene = effect_scene("comet", count, WIDTH, HEIGHT, (1, FRAME), Path(out), trail_points=POINTS)
        renderer = SceneRenderer(scene, WIDTH, HEIGHT)
        renderer.render(FRAME)
        system = renderer.simulation.systems[0]
        camera = camera_of(scene, WIDTH, HEIGHT)
        trails = system.trails
        rings = ref.Rings.from_textures(*trails.read(), system.count, POINTS, trails.tiles_x)
        pos_age, vel_life = system.read_state()
        segments = ref.ribbon_segments(system.settings, rings, pos_age, vel_life, camera.view_proj, WIDTH, HEIGHT,
                                       camera.pixels_per_unit)
    tiles = np.zeros((-(-HEIGHT // 16), -(-WIDTH // 16)))
    adds = 0.0
    for segment in segments:
        (a, b), half = segment.ends, segment.half_px
        x, y = ((a + b) / 2 // 16).astype(int)
        if 0 <= y < tiles.shape[0] and 0 <= x < tiles.shape[1]:  # on the target (by its middle): drawn
            area = float(np.hypot(*(b - a))) * (2.0 * float(max(half)) + 1.0)
            adds += area
            tiles[y, x] += area
    busiest = np.sort(tiles.ravel())[::-1]
    return {"segments": len(segments), "pixel_adds": adds, "pixel_adds_1m": adds * 1e6 / count,
            "top10_share": float(busiest[:10].sum() / adds), "top100_share": float(busiest[:100].sum() / adds)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--pairs-per-s", type=float, help="the GPU's scattered atomic pairs a second (gpu_splat.py)")
    parser.add_argument("--out", type=Path, default=records.RESULTS)
    args = parser.parse_args(argv)

    from addon.hosts.blender import BlenderHost

    row = {"case": f"{HEIGHT}p-1M-trails{POINTS}-coverage", "n": args.count, "width": WIDTH, "height": HEIGHT,
           **coverage(args.count)}
    if args.pairs_per_s:
        row.update(pairs_per_s=args.pairs_per_s, floor_ms=row["pixel_adds_1m"] / args.pairs_per_s * 1e3)
    records.write("events", BlenderHost().device, [row], results=args.out)


if __name__ == "__main__":
    main()
