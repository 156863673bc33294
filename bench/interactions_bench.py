"""Suite ``interactions``, issue 46's fluid and flocking cases, inside Blender on the GPU (BlenderHost):

* ``fluid-1M``: ``ms`` per whole simulation step (the simulate dispatch, the neighbour grid twice, 4 PBF
  iterations, vorticity and viscosity) of 1M fluid particles at rest in a box (a lattice at the rest spacing
  under gravity, five plane colliders); goal <= 6 ms.  ``ms <kernel>``: each kernel's share, measured by
  draining the GPU around every dispatch of one more step (the sum is above ``ms``: the drains cost);
  ``neighbours``: the mean neighbours a particle gathers, ``overflow``: particles that had more than a gather
  visits.
* ``flocking-1M``: the same for 1M birds (random in a ball, random headings, about 20 within the view radius);
  goal <= 2 ms.
* ``fluid-vs-blender`` and ``flocking-vs-blender``: ``ms_per_frame`` of ours against ``peer_ms_per_frame`` of
  Blender's own particle physics in the same ``bpy`` and run (the legacy particle system, ``physics_type``
  FLUID (SPH) and BOIDS, its point cache filled frame by frame), the same count (100K), emitter (the default
  cube's volume, all born on frame 1), frames and gravity; ``speedup`` their ratio (goal >= 100).  Blender's
  grid liquid, Mantaflow, does not bake in the headless ``bpy`` module (its bindings fail with
  ``'LevelsetGrid' object has no attribute 'setConst'``, a known Blender issue since 4.2), so it is not a peer.

    .venv/bin/python bench/interactions_bench.py            # the GPU machine
    .venv/bin/python bench/interactions_bench.py --quick    # any machine: every case, small counts
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bpy  # noqa: E402

from addon.engine.settings.settings import effect_settings  # noqa: E402
from addon.engine.simulate.effectors import Collider  # noqa: E402
from addon.engine.simulate.simulation import ParticleSystem  # noqa: E402
from addon.hosts.blender import BlenderHost  # noqa: E402
from bench import records  # noqa: E402

DT = 1 / 24
IDENTITY = np.identity(4)


class KernelTimes(BlenderHost):
    """The product host, timing each dispatch between two drains when ``timing`` is on (by kernel name)."""

    def __init__(self):
        super().__init__()
        self.timing = False
        self.ms: dict[str, list[float]] = defaultdict(list)

    def dispatch(self, kernel, groups, textures, constants):
        if not self.timing:
            return super().dispatch(kernel, groups, textures, constants)
        self.finish()
        start = time.perf_counter()
        super().dispatch(kernel, groups, textures, constants)
        self.finish()
        self.ms[kernel.name].append((time.perf_counter() - start) * 1e3)


def timed_steps(host, step, repeats: int) -> float:
    """Median ms of ``step()``, the GPU drained before and after each."""
    samples = []
    for _ in range(repeats):
        host.finish()
        start = time.perf_counter()
        step()
        host.finish()
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)


def plane(origin, normal) -> Collider:
    z = np.asarray(normal, float)
    x = np.cross(z, (0.3, 0.5, 0.8))
    x /= np.linalg.norm(x)
    m = np.identity(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = x, np.cross(z, x), z, origin
    return Collider("PLANE", m, half_size=(1e3, 1e3, 0))


def resting_fluid(host, count: int) -> ParticleSystem:
    """``count`` fluid particles as a lattice block at the rest spacing in a box its width (spacing 2 cm)."""
    size, side = 0.01, round(count ** (1 / 3))
    system = ParticleSystem(host, effect_settings({
        "count": count, "emission": "BURST", "lifetime": 1e4, "size": size, "interaction": "FLUID",
        "interaction_radius": 4 * size, "fluid_iterations": 4}))
    width = side * 2 * size
    system.set_scene_inputs([], [plane((0, 0, 0), (0, 0, 1)), plane((0, 0, 0), (1, 0, 0)),
                                 plane((width, 0, 0), (-1, 0, 0)), plane((0, 0, 0), (0, 1, 0)),
                                 plane((0, width, 0), (0, -1, 0))])
    cells = np.stack(np.unravel_index(np.arange(count), (side + 1, side, side))[::-1], axis=1)
    write_state(system, (cells + 0.5) * 2 * size, np.zeros((count, 3)))
    return system


def flock(host, count: int, rng) -> ParticleSystem:
    """``count`` birds in a ball, about 20 within a view radius of each, random headings at 3 m/s."""
    radius = (count / 20) ** (1 / 3) * 0.5  # the ball's radius, in view radii of 0.5
    system = ParticleSystem(host, effect_settings({
        "count": count, "emission": "BURST", "lifetime": 1e4, "gravity": (0, 0, 0), "drag": 0.0,
        "interaction": "FLOCKING", "interaction_radius": 0.5}))
    direction = rng.normal(size=(count, 3))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    positions = direction * radius * rng.random((count, 1)) ** (1 / 3)
    write_state(system, positions, rng.normal(size=(count, 3)) * 3.0)
    return system


def write_state(system: ParticleSystem, positions, velocities) -> None:
    count = len(positions)
    pos_age = np.concatenate([positions, np.zeros((count, 1))], axis=1).astype(np.float32)
    vel_life = np.concatenate([velocities, np.full((count, 1), 1e4)], axis=1).astype(np.float32)
    system.write_state(pos_age, vel_life)


def step_case(host: KernelTimes, case: str, system: ParticleSystem, repeats: int) -> dict:
    step = system.step
    for _ in range(3):  # compilation, the first steps' settling
        step(DT, IDENTITY, IDENTITY)
    ms = timed_steps(host, lambda: step(DT, IDENTITY, IDENTITY), repeats)
    host.ms.clear()
    host.timing = True
    step(DT, IDENTITY, IDENTITY)
    host.timing = False
    kernels = {f"ms {name}": round(sum(times), 4) for name, times in host.ms.items()}
    listed = system.interactions.grid.neighbour_lists(system.pos_age, system.vel_life, 1)
    return {"case": case, "n": system.settings.count, "ms": round(ms, 4), **kernels,
            "dispatches": sum(len(times) for times in host.ms.values()),
            "neighbours": round(float(listed[:, 0].mean()), 2), "overflow": system.interactions.read_overflow()}


# -- Blender's own particle physics, the peers

def blender_particles(count: int, physics: str, frames: int):
    """The default cube emitting ``count`` particles from its volume on frame 1, ``physics`` FLUID or BOIDS."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, frames
    mesh = bpy.data.meshes.new("Cube")
    corners = [(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    mesh.from_pydata(corners, [], faces)
    emitter = bpy.data.objects.new("Emitter", mesh)
    scene.collection.objects.link(emitter)
    emitter.modifiers.new("Particles", "PARTICLE_SYSTEM")
    settings = emitter.particle_systems[0].settings
    settings.count, settings.frame_start, settings.frame_end, settings.lifetime = count, 1, 1, 1000
    settings.emit_from, settings.physics_type = "VOLUME", physics
    if physics == "BOIDS":
        settings.boids.use_flight = True
    return scene


def blender_ms_per_frame(count: int, physics: str, frames: int) -> float:
    """Median ms of Blender filling its point cache one frame further (frames 2 on: frame 1 emits)."""
    scene = blender_particles(count, physics, frames)
    scene.frame_set(1)
    samples = []
    for frame in range(2, frames + 1):
        start = time.perf_counter()
        scene.frame_set(frame)
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)


def ours_ms_per_frame(host, count: int, interaction: str, frames: int) -> float:
    """Median ms of our frame step of ``count`` particles born in the same cube's volume on frame 1."""
    size = 0.5 * (8.0 / count) ** (1 / 3)  # the cube filled at the rest spacing
    values = {"count": count, "emission": "BURST", "lifetime": 1e4, "emitter_shape": "BOX", "emitter_radius": 1.0,
              "velocity": (0, 0, 0), "velocity_random": 0.0, "interaction": interaction}
    if interaction == "FLUID":
        values.update(size=size, interaction_radius=4 * size)
    else:
        values.update(gravity=(0, 0, 0), interaction_radius=8 * size, velocity_random=1.0)
    system = ParticleSystem(host, effect_settings(values))
    system.step(DT, IDENTITY, IDENTITY)  # frame 1: the burst
    samples = []
    for _ in range(frames - 1):
        host.finish()
        start = time.perf_counter()
        system.step(DT, IDENTITY, IDENTITY)
        host.finish()
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)


def peer_case(host, case: str, count: int, interaction: str, physics: str, frames: int) -> dict:
    peer = blender_ms_per_frame(count, physics, frames)
    ours = ours_ms_per_frame(host, count, interaction, frames)
    return {"case": case, "n": count, "ms_per_frame": round(ours, 4), "peer_ms_per_frame": round(peer, 3),
            "speedup": round(peer / ours, 1), "frames": frames,
            "peer": f"Blender's particle system, physics_type {physics}, point cache frame by frame"}


def interaction_cases(quick: bool) -> list[dict]:
    """Every case of the suite (``quick``: small counts, a few repeats)."""
    host = KernelTimes()
    rng = np.random.default_rng(46)
    big, peer_count, repeats, frames = (20_000, 2_000, 3, 4) if quick else (1_000_000, 100_000, 20, 10)
    rows = [step_case(host, f"fluid-{big // 1000}K" if quick else "fluid-1M", resting_fluid(host, big), repeats),
            step_case(host, f"flocking-{big // 1000}K" if quick else "flocking-1M", flock(host, big, rng), repeats),
            peer_case(host, "fluid-vs-blender", peer_count, "FLUID", "FLUID", frames),
            peer_case(host, "flocking-vs-blender", peer_count, "FLOCKING", "BOIDS", frames)]
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small counts: every case runs anywhere")
    parser.add_argument("--out", type=Path, default=None, help="results folder (default bench/results)")
    args = parser.parse_args(argv)
    import gpu

    rows = interaction_cases(args.quick)
    records.write("interactions", gpu.platform.renderer_get(), rows, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
