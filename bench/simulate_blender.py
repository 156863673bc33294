"""Suite ``simulate``, CPU side: GPU Particles against Blender's built-in particle system.

Both get the same scene set up here: an icosphere emitter (radius 0.2), N
particles emitted from its faces evenly over one lifetime, speed 1 along the
face normal, scene gravity, no drag, simulated frame by frame for one
lifetime.  Time per frame: Blender's ``scene.frame_set`` (particle system
evaluation) against one GPU Particles ``step`` plus a GPU finish, on this
machine's GPU (llvmpipe: the CPU).  ``ratio`` = Blender ms / ours.

    .venv/bin/python bench/simulate_blender.py [--counts 100000,1000000] [--frames 24]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bpy  # noqa: E402

from addon.engine.settings.settings import effect_settings  # noqa: E402
from addon.engine.simulate.simulation import ParticleSystem  # noqa: E402
from addon.hosts.blender import BlenderHost  # noqa: E402
from addon.scene.inputs import emitter_mesh  # noqa: E402
from bench import common  # noqa: E402


def emitter_scene(count: int, frames: int):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, frames
    bpy.ops.mesh.primitive_ico_sphere_add(radius=0.2, subdivisions=3)
    return scene, bpy.context.active_object


def blender_ms(count: int, frames: int) -> float:
    scene, emitter = emitter_scene(count, frames)
    emitter.modifiers.new("Particles", "PARTICLE_SYSTEM")
    particles = emitter.particle_systems[0].settings
    particles.count = count
    particles.frame_start, particles.frame_end = 1, frames
    particles.lifetime = frames
    particles.lifetime_random = 0.0
    particles.emit_from = "FACE"
    particles.distribution = "RAND"
    particles.normal_factor = 1.0
    particles.physics_type = "NEWTON"
    particles.render_type = "NONE"
    particles.display_method = "DOT"
    scene.frame_set(1)
    start = time.perf_counter()
    for frame in range(2, frames + 1):
        scene.frame_set(frame)
    ms = (time.perf_counter() - start) * 1e3 / (frames - 1)
    alive = sum(1 for p in emitter.evaluated_get(bpy.context.evaluated_depsgraph_get()).particle_systems[0].particles
                if p.alive_state == "ALIVE")
    print(f"blender {count:,}: {ms:.2f} ms/frame, {alive:,} alive at the end")
    return ms


def ours_ms(host, count: int, frames: int) -> float:
    scene, emitter = emitter_scene(count, frames)
    fps = scene.render.fps / scene.render.fps_base
    settings = effect_settings({
        "count": count, "emission": "CONTINUOUS", "emitter_shape": "MESH", "lifetime": frames / fps,
        "lifetime_random": 0.0, "velocity": (0, 0, 0), "velocity_random": 0.0, "normal_velocity": 1.0,
        "gravity": tuple(scene.gravity), "drag": 0.0,
    })
    system = ParticleSystem(host, settings, emitter_mesh(emitter, bpy.context.evaluated_depsgraph_get()))
    matrix = np.array(emitter.matrix_world)
    system.step(1 / fps, matrix, matrix)
    host.finish()
    start = time.perf_counter()
    for _ in range(2, frames + 1):
        system.step(1 / fps, matrix, matrix)
    host.finish()
    ms = (time.perf_counter() - start) * 1e3 / (frames - 1)
    pos_age, vel_life = system.read_state()
    alive = int(np.count_nonzero((pos_age[:, 3] >= 0) & (vel_life[:, 3] > 0)))
    print(f"gpu particles {count:,}: {ms:.2f} ms/frame, {alive:,} alive at the end")
    return ms


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--counts", default="100000,1000000")
    parser.add_argument("--frames", type=int, default=24)
    parser.add_argument("--out", action="append", help="results folder (repeatable; default bench/results)")
    args = parser.parse_args()
    host = BlenderHost()
    records = []
    device = f"{host.device} in Blender {bpy.app.version_string}"
    for count in (int(c) for c in args.counts.split(",")):
        ours = ours_ms(host, count, args.frames)
        peer = blender_ms(count, args.frames)
        records.append(common.record("simulate", "frame_vs_blender_particles", count, device, ours,
                                     peer="blender_particle_system", peer_ms=peer, ratio=peer / ours,
                                     frames=args.frames, clock="wall"))
    # Not "llvmpipe-cpu": those files are the git-ignored smoke runs of run_cpu.py.
    common.finish(records, "llvmpipe-blender", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
