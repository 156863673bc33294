"""Issue 46's fluid and flocking measures for the ``interactions`` suite (bench/interactions.py's CASES):

* ``kernel_ms``: where a whole step's time goes, each dispatch of one more step between two drains (``ms
  <kernel>``, summed by kernel; the sum is above the step's: the drains cost), with the mean neighbours a particle
  gathers;
* ``peer_case``: ``ms_per_frame`` of ours against ``peer_ms_per_frame`` of Blender's own particle physics in the
  same ``bpy`` and run (the legacy particle system, ``physics_type`` FLUID (SPH) or BOIDS, its point cache filled
  frame by frame), the same count, emitter (the default cube's volume, all born on frame 1), frames and gravity;
  ``speedup`` their ratio (goal >= 100), ``streamed_speedup`` against our frames run back to back (a bake ahead
  of the frames); ``dispatches`` and ``submit_ms``: one more frame's kernels and the
  CPU's time inside their dispatch calls (what a frame of a small effect cannot go below: Blender's API
  dispatches one kernel a call); ``timeline_*`` and ``streamed_*``: where a frame's time goes inside Blender, by
  GL timestamps around every dispatch (``frame_timeline``).  Our side runs after 0.5 s of frames that warm the
  GPU up (``warmed_up``).  Blender's grid liquid, Mantaflow, does not bake in the headless ``bpy`` module (its
  bindings fail with ``'LevelsetGrid' object has no attribute 'setConst'``, a known Blender issue since 4.2), so
  it is not a peer.
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from contextlib import contextmanager

import numpy as np

from addon.engine.settings.settings import effect_settings
from addon.engine.simulate.simulation import ParticleSystem

DT = 1 / 24
WARM_UP_S = 0.5  # our frames before the clock starts
IDENTITY = np.identity(4)


# -- Blender's own particle physics, the peers

def drain(host, texture) -> None:
    """Wait for the GPU's writes to ``texture``: one row of it read back.  ``Host.finish`` (a read of a 1x1 image
    no kernel writes) does not wait for compute on NVIDIA's driver (measured on an H200, 2026-12-02: 0.85 ms a
    flocking step drained so, 27 ms drained by a row of the state), so every figure here drains what its work
    wrote."""
    host.read_rows(texture, 1)


def blender_particles(count: int, physics: str, frames: int):
    """The default cube emitting ``count`` particles from its volume on frame 1, ``physics`` FLUID or BOIDS."""
    import bpy  # here alone: the moderngl host's benches build our side (peer_system) without Blender

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


def peer_system(host, count: int, interaction: str) -> ParticleSystem:
    """Our side of a peer case: ``count`` particles born in the cube's volume on the first step (a fluid at its
    rest spacing; birds at random headings in zero gravity)."""
    size = 0.5 * (8.0 / count) ** (1 / 3)  # the cube filled at the rest spacing
    values = {"count": count, "emission": "BURST", "lifetime": 1e4, "emitter_shape": "BOX", "emitter_radius": 1.0,
              "velocity": (0, 0, 0), "velocity_random": 0.0, "interaction": interaction}
    if interaction == "FLUID":
        values.update(size=size, interaction_radius=4 * size)
    else:
        values.update(gravity=(0, 0, 0), interaction_radius=8 * size, velocity_random=1.0)
    return ParticleSystem(host, effect_settings(values))


def warmed_up(host, count: int, interaction: str, seconds: float = WARM_UP_S) -> None:
    """Frames of another such system for ``seconds``: the GPU at the clocks a bake keeps it at (the peer's CPU
    seconds before, its boids' half a minute, leave it idle and its clocks down: measured on an H200, 2026-12-02,
    a 100K fluid frame 2.5 ms streamed so, 0.76 after frames back to back)."""
    system = peer_system(host, count, interaction)
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        system.step(DT, IDENTITY, IDENTITY)
        drain(host, system.pos_age)


def ours_ms_per_frame(host, count: int, interaction: str, frames: int) -> tuple[float, dict]:
    """Median ms of our frame step of ``count`` particles born in the same cube's volume on frame 1, each frame
    waited for (as Blender's frame change returns once done); ``streamed_ms_per_frame``: ``frames`` more between
    two waits (a simulation baked ahead, the GPU never idle between frames); what submitting one more frame costs
    on the CPU (``submission``).  The GPU warmed up first (``warmed_up``)."""
    warmed_up(host, count, interaction)
    system = peer_system(host, count, interaction)
    system.step(DT, IDENTITY, IDENTITY)  # frame 1: the burst
    samples = []
    for _ in range(frames - 1):
        drain(host, system.pos_age)
        start = time.perf_counter()
        system.step(DT, IDENTITY, IDENTITY)
        drain(host, system.pos_age)
        samples.append((time.perf_counter() - start) * 1e3)
    drain(host, system.pos_age)
    start = time.perf_counter()
    for _ in range(frames):
        system.step(DT, IDENTITY, IDENTITY)
    drain(host, system.pos_age)
    streamed = (time.perf_counter() - start) * 1e3 / frames
    return statistics.median(samples), {"streamed_ms_per_frame": round(streamed, 4), **submission(host, system)}


@contextmanager
def dispatching_through(host, wrap):
    """``host.dispatch`` replaced by ``wrap(dispatch)`` (a function of the host's own dispatch) while inside."""
    host.dispatch = wrap(host.dispatch)
    try:
        yield
    finally:
        del host.dispatch


def submission(host, system) -> dict:
    """One more frame step's dispatches and the CPU's ms inside them (Python binding each kernel's images and
    constants, the driver queueing it; the GPU not waited for): Blender's API dispatches one kernel a call, so a
    step of small effects costs at least this (``dispatches``, ``submit_ms``)."""
    calls = []

    def counted(dispatch):
        def call(kernel, groups, textures, constants):
            start = time.perf_counter()
            dispatch(kernel, groups, textures, constants)
            calls.append(time.perf_counter() - start)
        return call

    drain(host, system.pos_age)
    with dispatching_through(host, counted):
        system.step(DT, IDENTITY, IDENTITY)
    drain(host, system.pos_age)
    return {"dispatches": len(calls), "submit_ms": round(sum(calls) * 1e3, 4)}


PHYSICS = {"FLUID": "FLUID", "FLOCKING": "BOIDS"}  # our interaction -> Blender's physics_type


def peer_case(host, case, count: int, repeats: int) -> dict:
    """Ours against Blender's particle physics at ``count`` over ``repeats`` + 1 frames (interactions.Case)."""
    interaction, frames = case.values["interaction"], repeats + 1
    peer = blender_ms_per_frame(count, PHYSICS[interaction], frames)
    ours, submitted = ours_ms_per_frame(host, count, interaction, frames)
    return {"ms_per_frame": round(ours, 4), "peer_ms_per_frame": round(peer, 3), "speedup": round(peer / ours, 1),
            "streamed_speedup": round(peer / submitted["streamed_ms_per_frame"], 1), **submitted, "frames": frames,
            **frame_timeline(count, interaction, frames),
            "peer": f"Blender's particle system, physics_type {PHYSICS[interaction]}"}


def frame_timeline(count: int, interaction: str, frames: int) -> dict:
    """Where our frame's time goes inside Blender (bench/gl_timeline.py's GL timestamps before and after every
    dispatch), medians of ``frames`` frames each waited for: ``cpu_ms`` recording the step, ``gpu_ms`` from
    its first kernel's start to its last's end, ``kernels_ms`` their own time, ``gaps_ms`` the GPU idle between
    them and ``starved_ms`` the part of it before the CPU had called the next; ``streamed_*``: the same of
    ``frames`` frames back to back, a frame's share."""
    from bench.gl_timeline import TimelineHost, timeline  # Blender's own GL: here alone, as bpy above

    host = TimelineHost()
    warmed_up(host, count, interaction)
    system = peer_system(host, count, interaction)
    system.step(DT, IDENTITY, IDENTITY)  # the burst
    rows = []
    for _ in range(frames):
        drain(host, system.pos_age)
        cpu_start, gpu_start = host.start()
        system.step(DT, IDENTITY, IDENTITY)
        cpu_ms = (time.perf_counter() - cpu_start) * 1e3
        drain(host, system.pos_age)
        rows.append({"cpu_ms": cpu_ms, **timeline(host, cpu_start, gpu_start)})
    drain(host, system.pos_age)
    cpu_start, gpu_start = host.start()
    for _ in range(frames):
        system.step(DT, IDENTITY, IDENTITY)
    cpu_ms = (time.perf_counter() - cpu_start) * 1e3
    drain(host, system.pos_age)
    streamed = {"cpu_ms": cpu_ms, **timeline(host, cpu_start, gpu_start)}
    figures = ("cpu_ms", "gpu_ms", "kernels_ms", "gaps_ms", "starved_ms")
    return {**{f"timeline_{name}": round(statistics.median(r[name] for r in rows), 4) for name in figures},
            **{f"streamed_{name}": round(streamed[name] / frames, 4) for name in figures}}


def kernel_ms(host, system, h: float) -> dict:
    """One more step of ``system`` with the GPU drained around each dispatch: ms by kernel name."""
    spent: dict[str, float] = defaultdict(float)

    def timed(dispatch):
        def call(kernel, groups, textures, constants):
            written = [textures[i.name] for i in kernel.images if i.access != "READ" and i.dimensions == 2]
            for texture in written:
                drain(host, texture)
            start = time.perf_counter()
            dispatch(kernel, groups, textures, constants)
            for texture in written:
                drain(host, texture)
            spent[f"ms {kernel.name}"] += (time.perf_counter() - start) * 1e3
        return call

    with dispatching_through(host, timed):
        system.step(h, IDENTITY, IDENTITY)
    listed = system.interactions.grid.neighbour_lists(1)
    return {**{name: round(ms, 4) for name, ms in spent.items()},
            "neighbours_mean": round(float(listed[:, 0].mean()), 2)}


