"""Suite ``sprites``: the tile-binned alpha compositor against the rasterized sprites it replaced.

    python3 bench/sprite_bench.py            # the device run: 1080p, 1M and 4M sprites
    python3 bench/sprite_bench.py --quick    # 960x540, 20K sprites on llvmpipe: every path once

Under moderngl (the product's GLSL byte for byte), one smoke-like scene per
size: sprites of 1.5 to 6 pixels radius in a Gaussian cloud over the middle of
the frame (a third of them spread over the whole frame), distinct depths.
``ms``: SpriteLayer.draw under one GL timer query (footprints, depth sort,
tile counts, scan, the read-back of the instance total, instances, binning by
tile, blend), median of --repeats after a warm-up; ``wall_ms``: the same on
the host clock (Python and driver included); ``nowait_ms`` / ``nowait_wall_ms``:
the same without the read-back of the total (the viewport's way, lists grown);
``<walk>_nowait_ms`` / ``<walk>_max_diff`` for each of ``tile_lists.WALKS``: that draw with the
blend's walk and its largest difference from the product's layer (0); for the product's own walk
(``tile_lists.SPRITE_WALK``) they are ``nowait_ms`` and 0.
Peer: the rasterized sprites
(``bench/sprite_peer.py``) drawn in an exact back-to-front order
(``peer_ms``: the draw; ``peer_sort_ms``: the radix sort of the key-index
pairs it needs first, as the bake ran it).  ``max_diff``: the largest channel
difference between the two frames (orders agree: within 1/255).

Records go to bench/results/<device>-<date>-sprites.json (bench/records.py).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from addon.engine.draw import compositing  # noqa: E402
from addon.engine.draw.frame_resources import FrameResources  # noqa: E402
from addon.engine.draw.sprites import SpriteLayer  # noqa: E402
from addon.engine.order.sorting import ParticleSorter, SortKey  # noqa: E402
from addon.engine.order.tile_lists import WALKS  # noqa: E402
from addon.engine.settings.settings import effect_settings, render_settings  # noqa: E402
from addon.engine.simulate import simulation  # noqa: E402
from addon.hosts.moderngl import ModernGLHost  # noqa: E402
from bench import records  # noqa: E402
from bench.sprite_peer import draw_rasterized  # noqa: E402


def smoke_system(host, count: int, width: int, height: int, rng) -> simulation.ParticleSystem:
    settings = effect_settings({"count": count, "blend_mode": "ALPHA", "opacity": 0.25, "size": 6.0,
                                "size_random": 0.75, "color_random": 0.3, "emission_strength": 1.0})
    system = simulation.ParticleSystem(host, settings)
    spread = rng.random(count) < 1 / 3
    xy = np.where(spread[:, None], rng.uniform(0, (width, height), (count, 2)),
                  rng.normal((width / 2, height / 2), (width / 8, height / 8), (count, 2)))
    depth = (rng.permutation(count) + 0.5) / count * 8.0 - 4.0  # distinct: both orders agree
    vel_life = np.zeros((count, 4), np.float32)
    vel_life[:, 3] = 1.0
    system.write_state(np.column_stack([xy, depth, rng.uniform(0.0, 0.95, count)]).astype(np.float32), vel_life)
    return system


def timings(host, work, repeats: int, warmup_s: float) -> tuple[float, float]:
    """(median GPU ms from GL timer queries, median host ms) of ``work``."""
    start = time.perf_counter()
    while time.perf_counter() - start < warmup_s:
        work()
        host.finish()
    gpu, wall = [], []
    for _ in range(repeats):
        query = host.ctx.query(time=True)
        host.finish()
        began = time.perf_counter()
        with query:
            work()
        host.finish()
        wall.append((time.perf_counter() - began) * 1e3)
        gpu.append(query.elapsed / 1e6 if query.elapsed > 1 else wall[-1])
    return statistics.median(gpu), statistics.median(wall)


def bench_size(host, count: int, width: int, height: int, repeats: int, warmup_s: float, rng) -> dict:
    system = smoke_system(host, count, width, height, rng)
    compositor = compositing.Compositor(FrameResources(host, width, height), render_settings())
    camera = compositing.Camera.pixel_grid(width, height)  # larger world z is farther
    layer = SpriteLayer(host, width, height)
    layer.draw([system], compositor.resources, camera)
    ours = layer.read()
    sorter = ParticleSorter(system, "KEY_INDEX")
    key = SortKey.view_depth(np.diag([1.0, 1.0, -1.0, 1.0]))  # back to front under pixel_grid
    sorter.full(key)
    peer_target = host.texture("raster_sprites", width, height, "RGBA32F")
    draw_rasterized(host, peer_target, [system], compositor.resources, camera, [sorter.indices])
    max_diff = float(np.abs(host.read(peer_target) - ours).max())
    if max_diff > 1.5 / 255:
        raise SystemExit(f"{count:,} sprites: the tile compositor and the rasterized sprites differ by {max_diff:.4f}")
    ms, wall = timings(host, lambda: layer.draw([system], compositor.resources, camera), repeats, warmup_s)
    layer.kept.check_every = 1 << 30  # the viewport's way: lists already grown, no read-back in the draw
    nowait_ms, nowait_wall = timings(host, lambda: layer.draw([system], compositor.resources, camera), repeats, warmup_s)
    walks = {f"{layer.walk.lower()}_max_diff": 0.0, f"{layer.walk.lower()}_nowait_ms": nowait_ms}  # that draw
    for walk in (w for w in WALKS if w != layer.walk):
        walked = SpriteLayer(host, width, height, check_every=1 << 30, walk=walk)
        walked.draw([system], compositor.resources, camera)
        walks[f"{walk.lower()}_max_diff"] = float(np.abs(walked.read() - ours).max())
        walks[f"{walk.lower()}_nowait_ms"] = timings(host, partial(walked.draw, [system], compositor, camera),
                                                     repeats, warmup_s)[0]
    peer_ms, _ = timings(host, lambda: draw_rasterized(host, peer_target, [system], compositor.resources, camera,
                                                       [sorter.indices]), repeats, warmup_s)
    sort_ms, _ = timings(host, lambda: sorter.full(key), repeats, warmup_s)
    label = f"{count // 1_000_000}M" if count >= 1_000_000 else f"{count // 1000}K"
    return {"case": f"{height}p-{label}-alpha", "n": count, "width": width, "height": height, "ms": ms,
            "wall_ms": wall, "nowait_ms": nowait_ms, "nowait_wall_ms": nowait_wall, **walks,
            "peer": "rasterized sprites (sorted)", "peer_ms": peer_ms, "peer_sort_ms": sort_ms,
            "instances": int(host.read(layer.kept.total)[0, 0]), "max_diff": max_diff}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="960x540, 20K sprites: a smoke test (llvmpipe)")
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    host = ModernGLHost()
    rng = np.random.default_rng(3)
    if args.quick:
        rows = [bench_size(host, 20_000, 960, 540, 2, 0.0, rng)]
    else:
        rows = [bench_size(host, count, 1920, 1080, args.repeats, 0.5, rng) for count in (1 << 20, 1 << 22)]
    records.write("sprites", host.device, rows)


if __name__ == "__main__":
    main()
