"""Suite ``sdf``, case ``simulate-<n>M-4sdf``: the simulate step with 4 SDF colliders against the same step
without colliders, GPU timer queries on the moderngl host.

Rain (a continuous emitter 4 m wide, warmed up until every slot is alive or respawning) falls onto four
128-voxel analytic SDFs (a sphere, a box, a torus and a capsule, one under each quarter of the rain, turned
and with Blender's collision settings on).  About 6% of the live particles are within a grid box at a time
(measured at 100K on llvmpipe, ``near_share``; the rest fall beside the shapes or through the air), yet in
slot order nearly every warp of 32 holds one of them.  Fields:
``ms`` (with the colliders), ``peer_ms`` (none), ``ratio`` (goal <= 1.25), ``near_share`` (live particles within
a collider's grid box at the end: the share that samples an SDF), ``listed_share`` (slots the list pass
left to the contact pass in the last step) and ``sunk`` (live particles deeper inside a
solid shape, the sphere, than its contact distance plus half a voxel: must be 0, a cheaper step that loses
particles is a defect; the other three are permeable, and let some through on purpose).

Two more cases say where the time goes: ``simulate-<n>M-4sdf-apart`` (the same colliders 20 m beside the rain:
what the collider loop costs a particle that meets no grid box) and ``simulate-<n>M-4sdf-grid-order`` (the
settled rain in Grid Cell order, sorted by sorting.ParticleSorter before each step, ``sort_ms`` apart: the
SDF samples of a workgroup's particles then share cache lines; in slot order 32 unrelated particles fetch
from 32 places of the atlas).

The A/B of two checkouts is one command each on the GPU machine, e.g. ``--root /tmp/base --label base`` then
``--label split``: every case above runs against either add-on.

``--root OTHER_CHECKOUT`` times that checkout's add-on instead: a checkout without SDF colliders gets only
the step without colliders (case ``simulate-<n>M-no-colliders``), the A/B of the kernel's cost to scenes
with no collider; ``--label`` tells the two apart::

    python3 bench/sdf_simulate_bench.py [--count 4000000] [--repeats 30] [--root OTHER] [--label NAME] [--out DIR]
    python3 bench/sdf_simulate_bench.py --quick      # llvmpipe check: --count 100000 --repeats 3
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
APART = (20.0, 0.0, 0.0)  # where the colliders go for the -apart case: beside the rain
GRID_CELL = 0.05  # the Grid Cell sort's cell (settings' sort_cell_size default)


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


def moved(colliders, offset) -> list:
    """The colliders translated by ``offset`` (world)."""
    from dataclasses import replace

    shifted = []
    for collider in colliders:
        matrix = np.array(collider.matrix, dtype=np.float64)
        matrix[:3, 3] += offset
        shifted.append(replace(collider, matrix=matrix))
    return shifted


def shares(system, colliders) -> tuple[float, int]:
    """(live particles within a collider's grid box / live particles, live particles sunk into a solid shape
    deeper than its contact distance plus half a voxel), from the exact shapes."""
    from addon.engine.simulate.effectors import SDF_CONTACT_VOXELS

    pos_age, vel_life = system.read_state()
    live = (pos_age[:, 3] >= 0) & (pos_age[:, 3] < vel_life[:, 3])
    points = pos_age[live, :3].astype(np.float64)
    near = np.zeros(len(points), bool)
    sunk = np.zeros(len(points), bool)
    for collider, (_, _, distance) in zip(colliders, shapes()):
        inverse = np.linalg.inv(collider.matrix)
        local = points @ inverse[:3, :3].T + inverse[:3, 3]
        grid = collider.sdf
        low = np.asarray(grid.origin)
        near |= np.all((local >= low) & (local <= low + np.asarray(grid.dims) * grid.voxel), axis=1)
        contact = max(collider.thickness, SDF_CONTACT_VOXELS * grid.voxel)
        if collider.permeability == 0:
            sunk |= distance(local) < -(contact + 0.5 * grid.voxel)
    return float(near.mean()) if len(points) else 0.0, int(sunk.sum())


def listed_share(host, system) -> float:
    """The share of the slots that the last step's list pass left to the contact pass (its broad phase's
    reach: at least the steps that meet a grid box)."""
    length = system.contact_list[1]
    return int(host.read(length).ravel()[0]) / system.count


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, help="particles (default 4M, quick 100K)")
    parser.add_argument("--repeats", type=int, help="timed runs per case (default 30, quick 3)")
    parser.add_argument("--quick", action="store_true", help="small and few: a check of every case on llvmpipe")
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout whose addon/ is timed (default: this one)")
    parser.add_argument("--label", default="", help="appended to each case (e.g. a commit)")
    parser.add_argument("--out", action="append", help="results folder (repeatable; default bench/results)")
    args = parser.parse_args(argv)
    args.count = args.count or (100_000 if args.quick else 4_000_000)
    args.repeats = args.repeats or (3 if args.quick else 30)
    sys.path[:0] = [str(args.root), str(ROOT)]

    from addon.engine.settings.settings import effect_settings
    from addon.engine.simulate import effectors
    from addon.engine.simulate.simulation import ParticleSystem
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
        from addon.engine.order.sorting import ParticleSorter, SortKey
        from addon.engine.simulate import sdf

        colliders, atlas = colliders_and_atlas(host, sdf, effectors.Collider)
        system.set_sdf_atlas(atlas)
        system.set_scene_inputs([], moved(colliders, APART))
        apart_ms = timer.together(step)
        system.set_scene_inputs([], colliders)
        for _ in range(WARM_FRAMES):  # the rain settles onto the colliders
            step()
        ms = timer.together(step)
        near, sunk = shares(system, colliders)
        listed = listed_share(host, system)
        sorter = ParticleSorter(system, "DIRECT")
        key = SortKey.grid_cell((0.0, 0.0, 0.0), GRID_CELL)
        sort_ms, sorted_ms = timer.median(lambda: sorter.full(key), step)
        sorted_near, sorted_sunk = shares(system, colliders)
        peer = "the same step without colliders"
        records += [
            common.record("sdf", f"simulate-{millions}-4sdf{suffix}", args.count, host.device, ms, peer=peer,
                          peer_ms=peer_ms, ratio=ms / peer_ms, near_share=near, listed_share=listed, sunk=sunk,
                          clock=clock,
                          resolution=RESOLUTION, note="4 SDF colliders (128 voxels) under the rain, slot order; "
                                                      "goal ratio <= 1.25"),
            common.record("sdf", f"simulate-{millions}-4sdf-apart{suffix}", args.count, host.device, apart_ms,
                          peer=peer, peer_ms=peer_ms, ratio=apart_ms / peer_ms, clock=clock,
                          note="the 4 SDF colliders 20 m beside the rain: the collider loop without a contact"),
            common.record("sdf", f"simulate-{millions}-4sdf-grid-order{suffix}", args.count, host.device, sorted_ms,
                          peer=peer, peer_ms=peer_ms, ratio=sorted_ms / peer_ms, sort_ms=sort_ms,
                          near_share=sorted_near, sunk=sorted_sunk, clock=clock, resolution=RESOLUTION,
                          note=f"the settled rain sorted by {GRID_CELL} m grid cell before each step (sort_ms "
                               "apart)"),
        ]
    common.finish(records, common.device_slug(host.device) + "-sdf-simulate", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
