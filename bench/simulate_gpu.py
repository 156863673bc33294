"""Suite ``simulate``: one full simulation step on a real GPU through moderngl.

One step = gravity, drag, curl-noise turbulence and one plane collision, on a
continuous emitter warmed up until every slot is alive or respawning (with and
without the live compaction that stats and exports ask for); both state layouts, 1M/4M/16M particles.
``bound_ms`` is the state traffic of a step (read + write of both state
images: 64 B per particle full, 32 B compact) over the faster vec4 copy's
bandwidth measured in the same run (gl_timing.measure_bandwidth).  Also
records the compact layout's position error against the full layout.

``--breakdown``: at the largest size, where a step's time goes: the step
without the plane collider, without turbulence, without both, and the
simulate dispatch alone (constants bound once, no Python between dispatches),
and a step with no births (one burst of long-lived particles, all alive).

    python3 bench/simulate_gpu.py [--sizes 1,4,16] [--repeats 30] [--breakdown] [--out DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from addon.engine.seam.state import LAYOUTS  # noqa: E402
from addon.engine.settings.settings import effect_settings  # noqa: E402
from addon.engine.simulate.effectors import Collider  # noqa: E402
from addon.engine.simulate.simulation import SIMULATE_KERNELS, ParticleSystem, simulate_constants  # noqa: E402
from addon.hosts.moderngl import ModernGLHost  # noqa: E402
from bench import common  # noqa: E402
from bench.gl_timing import Timer, measure_bandwidth  # noqa: E402

DT = 1 / 24
WARM_FRAMES = 18  # more than one lifetime: every slot is alive or respawning


def settings_for(count: int, layout: str):
    return effect_settings({
        "count": count, "lifetime": 0.5, "lifetime_random": 0.5, "emitter_shape": "SPHERE", "emitter_radius": 0.2,
        "velocity": (0.0, 0.0, 4.0), "velocity_random": 1.5, "gravity": (0.0, 0.0, -9.81), "drag": 0.2,
        "turbulence_strength": 6.0, "turbulence_scale": 2.0, "turbulence_resolution": 32,
        "turbulence_speed": (0.0, 0.0, 1.0), "state_layout": layout, "seed": 1,
    })


def floor() -> Collider:
    matrix = np.identity(4)
    matrix[2, 3] = -0.5
    return Collider("PLANE", matrix, half_size=(50, 50, 0), bounce=0.4, friction=0.1)


def warmed_system(host, count: int, layout: str) -> ParticleSystem:
    system = ParticleSystem(host, settings_for(count, layout))
    system.set_scene_inputs([], [floor()])
    for _ in range(WARM_FRAMES):
        system.step(DT, np.identity(4), np.identity(4))
    return system


def step_and_compact(system: ParticleSystem) -> None:
    """A step, then the live slots compacted (what a frame with the Stats panel shown asks for)."""
    system.step(DT, np.identity(4), np.identity(4))
    system.live  # noqa: B018  (compacted on first use)


def breakdown(host, timer, system: ParticleSystem, record) -> None:
    """Time the step with parts of its work removed, then the bare dispatch."""
    settings = system.settings
    step = partial(system.step, DT, np.identity(4), np.identity(4))
    for case, turbulence, colliders in (("no_collider", 6.0, []), ("no_turbulence", 0.0, [floor()]),
                                        ("no_collider_no_turbulence", 0.0, [])):
        system.settings = dataclasses.replace(settings, turbulence_strength=turbulence)
        system.set_scene_inputs([], colliders)
        record(case, timer.together(step))
    system.settings = settings
    system.set_scene_inputs([], [floor()])
    constants = simulate_constants(settings, dt=DT, step_index=system.step_index, time=system.time,
                                   emitter_prev=np.identity(4), emitter_cur=np.identity(4), origin_in=system.origin,
                                   origin_out=system.origin, colliders=system.colliders)
    textures = {**system.textures, "triangles": system.triangles, "fields": system.field_texture,
                "noise": system.noise, "sdf_atlas": system.sdf_atlas}
    program = host._bind(SIMULATE_KERNELS[system.layout.name], textures, constants)
    record("dispatch_only", timer.together(partial(program.run, *system.groups)))
    steady = ParticleSystem(host, dataclasses.replace(settings, emission="BURST", lifetime=100.0, lifetime_random=0.0))
    steady.set_scene_inputs([], [floor()])
    steady.step(DT, np.identity(4), np.identity(4))  # the burst: every slot is born here
    record("no_births", timer.together(partial(steady.step, DT, np.identity(4), np.identity(4))))


def compact_error(full: np.ndarray, compact: np.ndarray) -> dict:
    """Position error of the compact layout where both layouts hold the same incarnation of a slot."""
    same = (full[:, 3] >= 0) & (compact[:, 3] >= 0) & (np.abs(full[:, 3] - compact[:, 3]) < 0.01)
    error = np.linalg.norm(full[same, :3] - compact[same, :3], axis=1)
    return {"same_incarnation": float(same.mean()), "median_error": float(np.median(error)),
            "p99_error": float(np.percentile(error, 99)), "max_error": float(error.max())}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1,4,16", help="millions of particles")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--breakdown", action="store_true", help="where the step's time goes, at the largest size")
    parser.add_argument("--out", action="append", help="results folder (repeatable; default bench/results)")
    args = parser.parse_args(argv)
    host = ModernGLHost()
    device = host.device
    clock = "wall" if "llvmpipe" in device.lower() else "gl"
    timer = Timer(host.ctx, args.repeats, warmup=5, clock=clock)
    sizes = [int(float(s) * 1_000_000) for s in args.sizes.split(",")]
    side = int(np.sqrt(max(sizes)) // 16 * 16)
    records = measure_bandwidth(host.ctx, timer, device, {"copy_vec4": max(sizes), "copy_image": side})
    gb_per_s = max(r["gb_per_s"] for r in records)
    for n in sizes:
        states = {}
        for layout in ("FULL", "COMPACT"):
            system = warmed_system(host, n, layout)
            ms = timer.together(partial(step_and_compact, system))
            traffic = 2 * LAYOUTS[layout].bytes_per_particle * n
            records.append(common.record("simulate", f"step_{layout.lower()}", n, device, ms, bytes=traffic,
                                         bound_ms=traffic / gb_per_s / 1e6, clock=clock,
                                         note="gravity, drag, turbulence, plane collision, compaction"))
            states[layout] = system.read_state()[0]
            # The step (forces, collision, integration), as a frame runs it: no live compaction.
            ms = timer.together(partial(system.step, DT, np.identity(4), np.identity(4)))
            records.append(common.record("simulate", f"step_{layout.lower()}_without_compaction", n, device, ms,
                                         bytes=traffic, bound_ms=traffic / gb_per_s / 1e6, clock=clock,
                                         note="gravity, drag, turbulence, plane collision"))
            if args.breakdown and n == max(sizes):
                def add(case, ms, layout=layout, traffic=traffic, n=n):
                    records.append(common.record("simulate", f"step_{layout.lower()}_{case}", n, device, ms,
                                                 bytes=traffic, bound_ms=traffic / gb_per_s / 1e6, clock=clock,
                                                 note="breakdown: no live compaction"))
                breakdown(host, timer, system, add)
        records.append(common.record("simulate", "compact_error", n, device, None,
                                     **compact_error(states["FULL"], states["COMPACT"])))
    common.finish(records, common.device_slug(device), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
