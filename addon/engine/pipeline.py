"""The per-frame recording: which kernel runs when, over what.

Reads like the algorithm::

    system.reset()                          # init_particles       (simulation.py)
    system.step(dt, emitter_prev, cur)      # simulate x substeps, compact live slots (simulation.py)
    compositor.splat(system, camera, live)  # splat over live slots, per effect (compositing.py)
    compositor.resolve()                    # resolve and clear    (compositing.py)

Everything talks to a :class:`addon.hosts.base.Host`, so the same recording
runs in Blender and, for benchmarks, under moderngl on a real GPU.
"""

from __future__ import annotations

from .compaction import COMPACTION_KERNELS
from .compositing import RESOLVE, SPLAT_KERNELS, SPLAT_LIVE_KERNELS, Camera, Compositor
from .scan import SCAN_KERNELS
from .simulation import INIT_KERNELS, SIMULATE_KERNELS, ParticleSystem

ALL_KERNELS = (*INIT_KERNELS.values(), *SIMULATE_KERNELS.values(), *SPLAT_KERNELS.values(),
               *SPLAT_LIVE_KERNELS.values(), RESOLVE, *SCAN_KERNELS, *COMPACTION_KERNELS)


def advance(systems: list[ParticleSystem], dt: float, emitters_prev, emitters_cur) -> None:
    """One frame of simulation for every effect, each with its emitter's motion."""
    for system, prev, cur in zip(systems, emitters_prev, emitters_cur):
        system.step(dt, prev, cur)


def composite(systems: list[ParticleSystem], compositor: Compositor, camera: Camera):
    """Splat every effect into the shared target, resolve, and return the float frame."""
    for system in systems:
        compositor.splat(system, camera, live=system.live)
    compositor.resolve()
    return compositor.read_frame()
