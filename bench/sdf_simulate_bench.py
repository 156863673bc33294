"""Suite ``sdf``, case ``simulate-<n>M-4sdf``: the simulate step with 4 SDF colliders against the same step
without colliders, GPU timer queries on the moderngl host.

Rain (a continuous emitter 4 m wide, warmed up until every slot is alive or respawning) falls onto four
128-voxel analytic SDFs (a sphere, a box, a torus and a capsule, one under each quarter of the rain, turned
and with Blender's collision settings on), so about half the particles trace an SDF every step.  Fields:
``ms`` (with the colliders), ``peer_ms`` (none), ``ratio`` (goal <= 1.25).

``--root OTHER_CHECKOUT`` times that checkout's add-on instead: a checkout without SDF colliders gets only
the step without colliders (case ``simulate-<n>M-no-colliders``), the A/B of the kernel's cost to scenes
with no collider; ``--label`` tells the two apart::

    python3 bench/sdf_simulate_bench.py [--count 4000000] [--repeats 30] [--root OTHER] [--label NAME] [--out DIR]
    python3 bench/sdf_simulate_bench.py --count 100000 --repeats 3      # llvmpipe check
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DT = 1 / 24
WARM_FRAMES = 30  # more than a lifetime: every slot is alive or respawning
RESOLUTION = 128


def rain(count: int) -> dict:
    return {"count": count, "lifetime": 1.0, "lifetime_random": 0.3, "emitter_shape": "BOX", "emitter_radius": 2.0,
            "emitter_scale": (1.0, 1.0, 0.05), "velocity": (0.0, 0.0, -4.0), "velocity_random": 1.0,
            "gravity": (0.0, 0.0, -9.81), "drag": 0.1, "seed": 2}


def shapes() -> list[tuple[str, np.ndarray, object]]:
    """(name, extent half-sizes, signed distance of shape-space points) of the four colliders."""
    def sphere(p):
        return np.linalg.norm(p, axis=-1) - 0.8

    def box(p):
        q = np.abs(p) - (0.7, 0.5, 0.4)
        return np.linalg.norm(np.maximum(q, 0), axis=-1) + np.minimum(q.max(axis=-1), 0)

    def torus(p):
        ring = np.linalg.norm(p[..., :2], axis=-1) - 0.6
        return np.hypot(ring, p[..., 2]) - 0.25

    def capsule(p):
        z = np.clip(p[..., 2], -0.5, 0.5)
        return np.linalg.norm(p - np.stack([np.zeros_like(z), np.zeros_like(z), z], axis=-1), axis=-1) - 0.35

    return [("sphere", np.array([0.8] * 3), sphere), ("box", np.array([0.7, 0.5, 0.4]), box),
            ("torus", np.array([0.85, 0.85, 0.25]), torus), ("capsule", np.array([0.35, 0.35, 0.85]), capsule)]


def colliders_and_atlas(host, sdf, Collider):
    """The four SDF colliders (2 x 2 under the rain) and their atlas texture on ``host``."""
    grids, volumes = [], []
    for _, half, distance in shapes():
        grid = sdf.sdf_grid(np.array([-half, half]), RESOLUTION)
        grids.append(grid)
        volumes.append(distance(grid.centres()).astype(np.float32))
    atlas = sdf.SdfAtlas(grids)
    data = np.full(atlas.shape, 1e3, np.float32)
    for grid, volume, z in zip(grids, volumes, atlas.z_offsets):
        nx, ny, nz = grid.dims
        data[z:z + nz, :ny, :nx] = volume
    colliders = []
    for k, (grid, z) in enumerate(zip(grids, atlas.z_offsets)):
        angle = 0.3 * k
        c, s = math.cos(angle), math.sin(angle)
        matrix = np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])
        matrix[:3, 3] = (-1.0 + 2.0 * (k % 2), -1.0 + 2.0 * (k // 2), 0.0)
        colliders.append(Collider("SDF", matrix, sdf=grid, sdf_z_offset=z, bounce=0.4, friction=0.2,
                                  thickness=0.01, stickiness=0.1 * k, permeability=0.05 * k))
    return colliders, host.volume("sdf_atlas", data)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=4_000_000)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout whose addon/ is timed (default: this one)")
    parser.add_argument("--label", default="", help="appended to each case (e.g. a commit)")
    parser.add_argument("--out", action="append", help="results folder (repeatable; default bench/results)")
    args = parser.parse_args(argv)
    sys.path[:0] = [str(args.root), str(ROOT)]

    from addon.engine import effectors
    from addon.engine.settings import effect_settings
    from addon.engine.simulation import ParticleSystem
    from addon.hosts.moderngl import ModernGLHost
    from bench import common, gl_timing

    host = ModernGLHost()
    clock = "wall" if "llvmpipe" in host.device.lower() else "gl"
    timer = gl_timing.Timer(host.ctx, args.repeats, 1 if clock == "wall" else 5, clock,
                            warm_s=0.0 if clock == "wall" else 0.3)
    emitter = np.identity(4)
    emitter[2, 3] = 3.0
    system = ParticleSystem(host, effect_settings(rain(args.count)))
    for _ in range(WARM_FRAMES):
        system.step(DT, emitter, emitter)

    def step():
        system.step(DT, emitter, emitter)

    millions = f"{args.count / 1e6:g}M"
    suffix = f"-{args.label}" if args.label else ""
    peer_ms = timer.together(step)
    records = [common.record("sdf", f"simulate-{millions}-no-colliders{suffix}", args.count, host.device, peer_ms,
                             clock=clock, note=f"the rain step without colliders; addon from {args.root}")]
    if hasattr(system, "set_sdf_atlas"):
        from addon.engine import sdf

        colliders, atlas = colliders_and_atlas(host, sdf, effectors.Collider)
        system.set_sdf_atlas(atlas)
        system.set_scene_inputs([], colliders)
        for _ in range(WARM_FRAMES):  # the rain settles onto the colliders
            step()
        ms = timer.together(step)
        records.append(common.record("sdf", f"simulate-{millions}-4sdf{suffix}", args.count, host.device, ms,
                                     peer="the same step without colliders", peer_ms=peer_ms, ratio=ms / peer_ms,
                                     clock=clock, resolution=RESOLUTION,
                                     note="4 SDF colliders (128 voxels) under the rain; goal ratio <= 1.25"))
    common.finish(records, common.device_slug(host.device) + "-sdf-simulate", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
