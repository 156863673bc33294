"""Suite ``simulate``: one full simulation step on a real GPU through moderngl.

One step = gravity, drag, curl-noise turbulence and one plane collision, on a
continuous emitter warmed up until every slot is alive or respawning; both
state layouts, 1M/4M/16M particles.  ``bound_ms`` is the state traffic of a
step (read + write of every state image) divided by the bandwidth of a plain
vec4 copy kernel measured in the same run.  Also prints the compact layout's
position error against the full layout after the warm-up.

    python3 bench/simulate_gpu.py [--sizes 1,4,16] [--repeats 30]
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import statistics
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from addon.engine.effectors import Collider  # noqa: E402
from addon.engine.settings import effect_settings  # noqa: E402
from addon.engine.simulation import LAYOUTS, ParticleSystem  # noqa: E402
from addon.hosts.moderngl import ModernGLHost  # noqa: E402

DT = 1 / 24
COPY = """#version 430
layout(local_size_x = 256) in;
layout(binding = 0, rgba32f) uniform readonly image2D src;
layout(binding = 1, rgba32f) uniform writeonly image2D dst;
void main()
{
  ivec2 t = ivec2(gl_GlobalInvocationID.xy);
  imageStore(dst, t, imageLoad(src, t));
}
"""


def gl_ms(ctx, run, repeats: int) -> float:
    """Median GPU time of ``run()`` in ms from timer queries (wall time where the driver has none)."""
    run()
    ctx.finish()
    times = []
    for _ in range(repeats):
        query = ctx.query(time=True)
        start = time.perf_counter()
        with query:
            run()
        ctx.finish()
        wall = (time.perf_counter() - start) * 1e3
        times.append(query.elapsed / 1e6 if query.elapsed > 1 else wall)
    return statistics.median(times)


def copy_bandwidth(host, texels: int, repeats: int) -> float:
    """Bytes per ms of a vec4 RGBA32F image copy over ``texels`` texels."""
    width = 4096
    rows = texels // width
    ctx = host.ctx
    src = ctx.texture((width, rows), 4, dtype="f4")
    dst = ctx.texture((width, rows), 4, dtype="f4")
    program = ctx.compute_shader(COPY)

    def run():
        src.bind_to_image(0, read=True, write=False)
        dst.bind_to_image(1, read=False, write=True)
        program.run(width // 256, rows, 1)

    ms = gl_ms(ctx, run, repeats)
    src.release()
    dst.release()
    return width * rows * 32 / ms


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
    emitter = np.identity(4)
    for _ in range(18):  # more than one lifetime: every slot is alive or respawning
        system.step(DT, emitter, emitter)
    return system


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1,4,16", help="millions of particles")
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    host = ModernGLHost()
    device = host.device
    sizes = [int(float(s) * 1_000_000) for s in args.sizes.split(",")]
    bandwidth = copy_bandwidth(host, max(sizes), args.repeats)
    print(f"{device}: copy kernel {bandwidth / 1e9:.3f} TB/s")
    rows = []
    emitter = np.identity(4)
    for n in sizes:
        states = {}
        for layout in ("FULL", "COMPACT"):
            system = warmed_system(host, n, layout)
            ms = gl_ms(host.ctx, partial(system.step, DT, emitter, emitter), args.repeats)
            traffic = 2 * LAYOUTS[layout].bytes_per_particle * n  # read and write of both state images
            bound = traffic / bandwidth
            rows.append({"case": f"step-{layout.lower()}-{n // 1_000_000}M", "n": n, "ms": round(ms, 4),
                         "bound_ms": round(bound, 4), "fraction_of_copy": round(bound / ms, 3),
                         "bytes_per_step": traffic})
            states[layout] = system.read_state()[0]
        full, compact = states["FULL"], states["COMPACT"]
        alive = (full[:, 3] >= 0) & (compact[:, 3] >= 0) & (np.abs(full[:, 3] - compact[:, 3]) < 0.01)
        error = np.linalg.norm(full[alive, :3] - compact[alive, :3], axis=1)
        print(f"{n:,}: compact vs full position error, same incarnation ({alive.mean():.0%} of slots): "
              f"median {np.median(error):.2e}, p99 {np.percentile(error, 99):.2e}, max {error.max():.2e} world units")
    write("simulate", device, rows)
    return 0


def write(suite: str, device: str, rows: list[dict]) -> Path:
    """Print the table and store the records as bench/results/<device>-<date>-<suite>.json."""
    date = datetime.date.today().isoformat()
    command = " ".join(["python3", *sys.argv])
    records = [{"suite": suite, "device": device, "date": date, "command": command, **row} for row in rows]
    slug = re.sub(r"[^a-z0-9]+", "-", device.lower()).strip("-")[:40]
    path = ROOT / "bench" / "results" / f"{slug}-{date}-{suite}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records, indent=2) + "\n")
    keys = list(dict.fromkeys(k for r in rows for k in r))
    print(" | ".join(keys))
    for r in rows:
        print(" | ".join(str(r.get(k, "")) for k in keys))
    print(f"wrote {path}")
    return path


if __name__ == "__main__":
    sys.exit(main())
