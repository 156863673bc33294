"""Suite ``shadow-volume``: the self-shadowing volume's GPU time (engine/light/shadow_volume.py) under moderngl.

Cases ``<grid>-<lights>`` at 1M and 4M particles (a smoke-like Gaussian cloud, sizes as a smoke preset's):
the whole ``ShadowVolume.build`` (bounds, place, splat, blur, resolve, march) with 1 or 4 shadowed lights, and its
stages under their own GL timer queries (``bounds_ms``, ``splat_ms``, ``blur_ms``, ``resolve_ms``, ``march_ms``).

    source bench/moderngl_env.sh && python3 bench/shadow_volume_bench.py --out $OUT   (a lent GPU)
    .venv/bin/python bench/shadow_volume_bench.py --quick                              (here: paths only)
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from addon.engine.light import shadow_volume  # noqa: E402
from addon.engine.look.look import LOOK_SIZE, look_table  # noqa: E402
from addon.engine.settings.settings import effect_settings  # noqa: E402
from addon.engine.simulate import simulation  # noqa: E402
from addon.hosts.moderngl import ModernGLHost  # noqa: E402
from bench.common import device_slug, finish, record  # noqa: E402

LIGHTS = [SimpleNamespace(type="SUN", direction=(0.3, -0.2, -1.0), position=(0, 0, 0), shadow_slot=0),
          *(SimpleNamespace(type="POINT", direction=(0, 0, -1), position=position, shadow_slot=slot)
            for slot, position in ((1, (2.0, 0.0, 1.0)), (2, (-2.0, 1.0, 0.5)), (3, (0.0, 0.2, 0.1))))]


def cloud(host, count: int, rng):
    settings = effect_settings({"count": count, "size": 0.03, "size_end": 3.0, "size_random": 0.5,
                                "lifetime": 4.0, "density": 0.5})
    system = simulation.ParticleSystem(host, settings)
    pos_age = np.concatenate([rng.normal(0.0, 0.6, (count, 3)), rng.uniform(0, 4, (count, 1))], 1)
    vel_life = np.zeros((count, 4), np.float32)
    vel_life[:, 3] = 4.0
    system.write_state(pos_age.astype(np.float32), vel_life)
    return system, host.texture("look", LOOK_SIZE, 1, "RGBA32F", look_table(settings))


def timed(ctx, work, repeats: int) -> float:
    """Median GPU ms of ``work`` under a GL timer query (after one warm-up)."""
    work()
    query, samples = ctx.query(time=True), []
    for _ in range(repeats):
        with query:
            work()
        samples.append(query.elapsed / 1e6)
    return statistics.median(samples)


def measure(host, volume, systems, lights, repeats: int) -> tuple[float, dict]:
    """The whole build's ms, and each stage's."""
    rows = shadow_volume.slot_lights(lights)
    stages = {"bounds_ms": lambda: volume.place(systems), "splat_ms": lambda: volume.splat(systems),
              "blur_ms": volume.blur, "resolve_ms": volume.resolve, "march_ms": lambda: volume.march(rows)}
    total = timed(host.ctx, lambda: volume.build(systems, lights), repeats)
    return total, {name: timed(host.ctx, work, repeats) for name, work in stages.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small counts and few repeats (checks the paths)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    host = ModernGLHost()
    rng = np.random.default_rng(29)
    counts, repeats = ((20_000,), 3) if args.quick else ((1_000_000, 4_000_000), 30)
    records = []
    for count in counts:
        systems = [cloud(host, count, rng)]
        for resolution in (32, 64, 128):
            volume = shadow_volume.ShadowVolume(host, resolution)
            for lights in (1, 4):
                total, parts = measure(host, volume, systems, LIGHTS[:lights], repeats)
                records.append(record("shadow-volume", f"{resolution}-{lights}", count, host.device, total, **parts))
                print(records[-1], flush=True)
    finish(records, device_slug(host.device), [args.out] if args.out else None)


if __name__ == "__main__":
    main()
