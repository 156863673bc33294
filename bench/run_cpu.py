"""`make bench`: the slice's kernels inside Blender on this machine (BlenderHost, llvmpipe).

Times the real recording, stage by stage, with ``host.finish()`` before and
after each call (host wall clock; median of ``--repeats``):

* ``init``      ParticleSystem.reset()          (init_particles)
* ``simulate``  ParticleSystem.step(1/24, ...)  (one simulate dispatch, default settings)
* ``splat``     Compositor.splat(system, camera)
* ``resolve``   Compositor.resolve()
* ``frame``     step + splat + resolve, as one frame of playback costs the GPU

at 100K and 1M particles (default effect settings, simulated 2 s so every slot
is born) and 960x540 and 1920x1080 targets, seen by a perspective camera.
Writes ``bench/results/<device>-<date>.json`` (see bench/common.py) and prints
the table last.  Takes well under two minutes on two cores.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from addon.engine.draw.compositing import Camera, Compositor, camera_view, perspective  # noqa: E402
from addon.engine.draw.frame_resources import FrameResources  # noqa: E402
from addon.engine.settings.settings import effect_settings, render_settings  # noqa: E402
from addon.engine.simulate.simulation import ParticleSystem  # noqa: E402
from bench import common  # noqa: E402

COUNTS = (100_000, 1_000_000)
TARGETS = ((960, 540), (1920, 1080))
DT = 1 / 24
PREROLL_FRAMES = 48  # one default lifetime (2 s): every slot born
IDENTITY = np.identity(4)


def camera_for(width, height):
    """The default preset's stage, roughly: fountain at the origin seen from 6 m away."""
    view = camera_view((0.0, -6.0, 1.0), (0.0, 0.0, 0.6))
    return Camera(perspective(math.radians(40.0), width / height, 0.1, 100.0) @ view, width, height)


def timed(host, fn, repeats, warmup=1):
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        host.finish()
        start = time.perf_counter()
        fn()
        host.finish()
        samples.append((time.perf_counter() - start) * 1e3)
    return common.median_ms(samples), samples


def visible_fraction(system, camera):
    pos_age, vel_life = system.read_state()
    alive = (pos_age[:, 3] >= 0) & (pos_age[:, 3] < vel_life[:, 3])
    p = pos_age[alive, :3].astype(np.float64)
    clip = np.c_[p, np.ones(len(p))] @ camera.view_proj.T
    inside = (clip[:, 3] > 0) & (np.abs(clip[:, :3]) <= clip[:, 3:4]).all(axis=1)
    return float(alive.mean()), float(inside.sum() / max(1, len(pos_age)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--counts", type=int, nargs="+", default=list(COUNTS))
    parser.add_argument("--out", action="append", help="folder for <device>-<date>.json (default bench/results)")
    args = parser.parse_args(argv)
    start = time.perf_counter()

    from addon.hosts.blender import BlenderHost

    host = BlenderHost()
    device = host.device
    print(f"host: blender, device: {device}, cpus: {os.cpu_count()}", flush=True)
    extra = {"host": "blender", "clock": "wall", "repeats": args.repeats}
    records = []
    for n in args.counts:
        system = ParticleSystem(host, effect_settings({"count": n}))
        ms, _ = timed(host, system.reset, args.repeats)
        records.append(common.record("cpu", "init", n, device, ms, **extra))
        system.reset()
        for _ in range(PREROLL_FRAMES):
            system.step(DT, IDENTITY, IDENTITY)

        def step(system=system):
            system.step(DT, IDENTITY, IDENTITY)

        ms, _ = timed(host, step, args.repeats)
        records.append(common.record("cpu", "simulate", n, device, ms, **extra))
        for width, height in TARGETS:
            camera = camera_for(width, height)
            alive, visible = visible_fraction(system, camera)
            compositor = Compositor(FrameResources(host, width, height), render_settings({}))
            parts = {"splat": partial(compositor.splat, system, camera), "resolve": compositor.resolve}
            samples = {name: [] for name in parts}
            for fn in parts.values():  # warm-up (compiles), then alternate so every splat is resolved
                fn()
            for _ in range(args.repeats):
                for name, fn in parts.items():
                    host.finish()
                    t0 = time.perf_counter()
                    fn()
                    host.finish()
                    samples[name].append((time.perf_counter() - t0) * 1e3)
            size = {"width": width, "height": height, "alive": round(alive, 4), "visible": round(visible, 4)}
            for name in parts:
                records.append(common.record("cpu", name, n, device, common.median_ms(samples[name]), **size, **extra))

            def frame(system=system, compositor=compositor, camera=camera):
                system.step(DT, IDENTITY, IDENTITY)
                compositor.splat(system, camera)
                compositor.resolve()

            ms, _ = timed(host, frame, args.repeats)
            records.append(common.record("cpu", "frame", n, device, ms, **size, **extra))
            compositor.take_stats()
            print(f"  n={n:,} {width}x{height} done [{time.perf_counter() - start:.1f} s]", flush=True)
    print(f"total {time.perf_counter() - start:.1f} s")
    common.finish(records, common.device_slug(device), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
