"""The particle layer's depth (``addon/engine/draw/particle_depth.py``) on its own: GPU time of one frame's
``clear`` + ``add`` for the footprints the render integration marks, through moderngl with GL timer queries.

Suite ``particle-depth``, cases ``<distribution>[-stretched]-<footprint>`` (the splat benchmark's distributions,
``bench/cases.py``; its footprint cameras, ``bench/footprint_bench.footprint_cameras``), field ``ms``.
It runs unchanged against an older checkout of the add-on (``--root``), so a kernel change gets its A/B in
one run on one machine::

    python3 bench/particle_depth_bench.py [--quick] [--root OTHER_CHECKOUT] [--label NAME] [--out DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and few repeats (llvmpipe check)")
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout whose addon/ is timed (default: this one)")
    parser.add_argument("--label", default="", help="appended to each case (e.g. a commit)")
    parser.add_argument("--out", action="append", help="results folder (repeatable; default bench/results)")
    args = parser.parse_args(argv)
    sys.path[:0] = [str(args.root), str(ROOT)]

    import moderngl
    import numpy as np

    from addon.engine.draw.compositing import Compositor
    from addon.engine.draw.frame_resources import FrameResources
    from addon.engine.draw.particle_depth import ParticleDepth
    from addon.engine.simulate.simulation import ParticleSystem
    from addon.hosts.moderngl import ModernGLHost
    from bench import cases, common, gl_timing
    from bench.footprint_bench import footprint_cameras

    sizes = gl_timing.QUICK if args.quick else gl_timing.FULL
    ctx = moderngl.create_context(standalone=True, require=430, backend="egl")
    host = ModernGLHost(ctx)
    clock = "wall" if "llvmpipe" in host.device.lower() else "gl"
    timer = gl_timing.Timer(ctx, 5 if args.quick else 30, 1 if args.quick else 5, clock,
                            warm_s=0.0 if clock == "wall" else 0.3)
    n, width, height = sizes["n"], sizes["width"], sizes["height"]
    gl_timing.log(f"GL: {host.device}; addon from {args.root}; {n} particles at {width}x{height}")
    rng = np.random.default_rng(20261126)
    records, start = [], time.perf_counter()
    for case, kind in (("normal", ""), ("clumpy", ""), ("normal", "stretched")):
        xyz = cases.positions(case, n, width, height, rng)
        pos_age, vel_life = cases.state(xyz, rng)
        settings = cases.settings(n)
        if kind:  # additive quads reaching back to their tails (the QUAD reach)
            settings = dataclasses.replace(settings, particle_type="STRETCHED", stretch=0.02)
        system = ParticleSystem(host, settings)
        system.write_state(pos_age, vel_life)
        compositor = Compositor(FrameResources(host, width, height), cases.render(1.0))
        depth = ParticleDepth(host, width, height)
        look, world_to_view = compositor.resources.look_texture(system), np.eye(4)
        for name, (camera, _) in footprint_cameras(width, height).items():
            def add(camera=camera, depth=depth, system=system, look=look, world_to_view=world_to_view):
                depth.add(system, camera, world_to_view, look)

            ms = timer.together(depth.clear, add)
            label = f"{case}{'-' + kind if kind else ''}-{name}{'-' + args.label if args.label else ''}"
            gl_timing.log(f"{label}: {ms:.3f} ms")
            records.append({"suite": "particle-depth", "case": label, "n": n, "width": width, "height": height,
                            "device": host.device, "date": common.today(), "ms": ms, "clock": clock,
                            "command": " ".join(["python3", *sys.argv])})
        gl_timing.release(system.pos_age, system.vel_life, depth.image)
    gl_timing.log(f"total {time.perf_counter() - start:.1f} s")
    common.finish(records, common.device_slug(host.device) + "-particle-depth", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
