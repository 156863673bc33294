"""The per-frame recording: which kernel runs when, over what.

Reads like the algorithm::

    system.reset()                          # init_particles       (simulation.py)
    system.step(dt, emitter_prev, cur)      # simulate x substeps  (simulation.py)
    compositor.splat(system, camera)        # splat, per effect    (compositing.py)
    compositor.resolve()                    # resolve and clear    (compositing.py)

Everything talks to a :class:`addon.hosts.base.Host`, so the same recording
runs in Blender and, for benchmarks, under moderngl on a real GPU.
"""

from __future__ import annotations

from .compositing import RESOLVE, SPLAT_KERNELS, Camera, Compositor
from .simulation import INIT_KERNELS, SIMULATE_KERNELS, ParticleSystem

ALL_KERNELS = (*INIT_KERNELS.values(), *SIMULATE_KERNELS.values(), *SPLAT_KERNELS.values(), RESOLVE)


def advance(systems: list[ParticleSystem], dt: float, emitters_prev, emitters_cur) -> None:
    """One frame of simulation for every effect, each with its emitter's motion."""
    for system, prev, cur in zip(systems, emitters_prev, emitters_cur):
        system.step(dt, prev, cur)


def composite(systems: list[ParticleSystem], compositor: Compositor, camera: Camera):
    """Splat every effect into the shared target, resolve, and return the float frame."""
    for system in systems:
        compositor.splat(system, camera)
    compositor.resolve()
    return compositor.read_frame()
