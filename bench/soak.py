"""Reliability soaks: long simulations and add/remove/register cycles, with the figures the README records.

    python bench/soak.py frames [--frames 10000] [--count 100000]
        every frame: no NaN or Inf in the state, the live count equal to the emission schedule's
        (continuous emission, fixed lifetimes: min(count, births so far))
    python bench/soak.py preroll [--count 10000]
        bake one frame of an effect with the longest preroll a property accepts (1000 s, 24,000
        steps), a piece at a time as the operator runs it: pieces, seconds, the frame written
    python bench/soak.py cycles [--cycles 200]
        add an effect, render a frame with a fresh host, free it, remove the effect, unregister and
        register again: GPU textures, draw handlers and app handlers must not grow
"""

from __future__ import annotations

import argparse
import gc
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import numpy as np  # noqa: E402

from bench.records import write  # noqa: E402


def soak_frames(frames: int, count: int) -> dict:
    from addon.engine.settings.settings import effect_settings
    from addon.engine.simulate.simulation import ParticleSystem, birth_interval
    from addon.hosts.blender import BlenderHost

    host = BlenderHost()
    settings = effect_settings({"count": count, "lifetime": 1.5, "lifetime_random": 0.0, "turbulence_strength": 3.0,
                                "drag": 0.2, "velocity_random": 2.0})
    system = ParticleSystem(host, settings)
    dt, interval = 1 / 24, birth_interval(settings)
    emitter = np.identity(4)
    worst, bad_frames, start = 0, 0, time.perf_counter()
    for frame in range(1, frames + 1):
        emitter[:3, 3] = (math.sin(frame / 50), 0.0, 0.0)
        system.step(dt, emitter, emitter)
        pos_age, vel_life = system.read_state()
        if not (np.isfinite(pos_age).all() and np.isfinite(vel_life).all()):
            bad_frames += 1
        expected = min(count, math.floor(frame * dt / interval) + 1)
        worst = max(worst, abs(system.live.read_count() - expected))
    return {"case": f"frames-{frames}-{count}", "frames": frames, "particles": count, "non_finite_frames": bad_frames,
            "worst_live_count_error": worst, "seconds": round(time.perf_counter() - start, 1)}


def live_textures() -> int:
    from addon.hosts.base import Texture

    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, Texture))


def soak_cycles(cycles: int) -> dict:
    import bpy

    import addon
    from addon.cli import build_scene
    from addon.engine.settings.presets import load_preset
    from addon.hosts.blender import BlenderHost
    from addon.scene.renderer import SceneRenderer

    def handler_count() -> int:
        return sum(len(getattr(bpy.app.handlers, n)) for n in dir(bpy.app.handlers)
                   if isinstance(getattr(bpy.app.handlers, n), list))

    from addon import viewport

    build_scene(load_preset("default"), (1, 2), (32, 18), ROOT / "out" / "soak")
    counts, start = [], time.perf_counter()
    for _ in range(cycles):
        addon.register()
        bpy.ops.gpu_particles.add(preset="default")
        bpy.context.active_object.gpu_particles.active_effect.count = 2000
        renderer = SceneRenderer(bpy.context.scene, 32, 18, host=BlenderHost())  # its own shaders, freed below
        renderer.render(2)
        while_rendering = live_textures()
        del renderer  # the host and its shaders go with it, as unregistering and reloading do
        bpy.ops.gpu_particles.remove()
        addon.unregister()
        counts.append((live_textures(), handler_count(), viewport._draw_handle is not None))
    first, last = counts[1], counts[-1]
    return {"case": f"cycles-{cycles}", "cycles": cycles, "textures_while_rendering": while_rendering,
            "textures_after_2nd": first[0], "textures_after_last": last[0],
            "app_handlers_after_2nd": first[1], "app_handlers_after_last": last[1],
            "draw_handlers_left": sum(c[2] for c in counts), "seconds": round(time.perf_counter() - start, 1)}


def soak_preroll(count: int) -> dict:
    import bpy

    import addon
    from addon.cli import build_scene
    from addon.engine.settings.presets import load_preset
    from addon.engine.settings.settings import EFFECT_FIELDS
    from addon.output.bake import BakeJob

    longest = next(f.max for f in EFFECT_FIELDS if f.name == "preroll")
    scene, emitter = build_scene(load_preset("default"), (1, 1), (64, 36), ROOT / "out" / "soak_preroll")
    addon.register()
    bpy.ops.gpu_particles.add(preset="default")
    effect = emitter.gpu_particles.active_effect
    effect.count, effect.preroll = count, longest
    start, pieces, slowest = time.perf_counter(), 0, 0.0
    job = BakeJob(scene)
    while not job.finished:
        piece = time.perf_counter()
        if job.step() is None:
            pieces += 1
        slowest = max(slowest, time.perf_counter() - piece)
    job.close()
    live = job.renderer.stats()["live_particles"][0]
    addon.unregister()
    return {"case": f"preroll-{longest:g}s-{count}", "preroll_s": longest, "particles": count, "pieces": pieces,
            "slowest_piece_s": round(slowest, 2), "frames_written": len(job.written), "live_after": live,
            "seconds": round(time.perf_counter() - start, 1)}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("soak", choices=("frames", "cycles", "preroll"))
    parser.add_argument("--frames", type=int, default=10_000)
    parser.add_argument("--count", type=int, help="particles (frames: 100,000; preroll: 10,000)")
    parser.add_argument("--cycles", type=int, default=200)
    args = parser.parse_args(argv)
    from addon.hosts.blender import BlenderHost

    if args.soak == "frames":
        row = soak_frames(args.frames, args.count or 100_000)
    elif args.soak == "preroll":
        row = soak_preroll(args.count or 10_000)
    else:
        row = soak_cycles(args.cycles)
    write("soak", BlenderHost().device, [row])
    return row


if __name__ == "__main__":
    main()
