"""The per-frame recording: which kernel runs when, over what.

Reads like the algorithm::

    system.reset()                          # init_particles       (simulation.py)
    system.step(dt, emitter_prev, cur)      # simulate x substeps             (simulation.py)
    depth.build_coarse()                    # coarse_depth, after the mesh pre-pass (depth.py)
    effect_sort.update(...)                 # sort passes or a full sort (sorting.py)
    compositor.add(system, camera)          # splat, or raster, per Add effect (compositing.py, raster.py)
    compositor.resolve()                    # resolve and clear    (compositing.py)
    sprites.draw(alpha_systems, ...)        # Alpha effects, binned into tiles, nearest first (sprites.py)
    sprites.over(compositor)                # over the frame       (sprites.py)
    glints.apply(compositor.frame)          # bright points -> star sprites, added (glints.py)
    compositor.take_stats()                 # overflows, peak -> auto Emax

Everything talks to a :class:`addon.hosts.base.Host`, so the same recording
runs in Blender and, for benchmarks, under moderngl on a real GPU.
"""

from __future__ import annotations

from .compositing import Camera, Compositor
from .simulation import ParticleSystem
from .sprites import SpriteLayer


def advance(systems: list[ParticleSystem], dt: float, emitters_prev, emitters_cur) -> None:
    """One frame of simulation for every effect, each with its emitter's motion."""
    for system, prev, cur in zip(systems, emitters_prev, emitters_cur):
        system.step(dt, prev, cur)


def composite_into(systems: list[ParticleSystem], compositor: Compositor, camera: Camera,
                   sprites: SpriteLayer | None = None, orders=None) -> None:
    """Composite every Add effect into the shared target, resolve, and lay the Alpha
    effects over it (each drawn in its ``orders`` entry: sorted indices, or None
    for slot order); the frame stays on the GPU (``compositor.frame``) for the glints
    (``GlintStage.apply``, when the scene has them on)."""
    orders = orders or [None] * len(systems)
    alpha = [(system, order) for system, order in zip(systems, orders) if system.settings.blend_mode == "ALPHA"]
    for system in systems:
        if system.settings.blend_mode != "ALPHA":
            compositor.add(system, camera)
    compositor.resolve()
    if alpha:
        sweep = camera.shutter.close - camera.shutter.open if camera.shutter is not None else 0.0
        sprites.draw([system for system, _ in alpha], compositor, camera, [order for _, order in alpha], shutter=sweep)
        sprites.over(compositor)


def composite(systems: list[ParticleSystem], compositor: Compositor, camera: Camera,
              sprites: SpriteLayer | None = None, orders=None):
    """:func:`composite_into`, then the float frame read back."""
    composite_into(systems, compositor, camera, sprites, orders)
    return compositor.read_frame()
