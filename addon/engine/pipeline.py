"""The per-frame recording: which kernel runs when, over what.

Reads like the algorithm::

    system.reset()                          # init_particles       (simulation.py)
    system.step(dt, emitter_prev, cur)      # simulate x substeps             (simulation.py)
    step_family(root, dt, motion)           # sub-emitters: each substep parent, births, child (events.py)
    depth.build_coarse()                    # coarse_depth, after the mesh pre-pass (depth.py)
    effect_sort.update(...)                 # sort passes or a full sort (sorting.py)
    cloud.update(primitives)                # the CSG cloud follows its primitives (csg.py)
    light_effects(lit, lights, view, res)   # shadow volume, then the light pass per lit effect (light_pass.py)
    surface_shadow.draw(...)                # the particles' shadows on the scene depth's surfaces (surface_shadow.py)
    compositor.add(system, camera)          # splat, quads by tiles or raster, per Add effect (compositing.py)
    sprites.draw(alpha_systems, res, ...)   # Alpha effects, binned into tiles, nearest first (sprites.py)
    compositor.resolve(sprites.target)      # resolve and clear into res.frame, the sprites over it (compositing.py)
    glints.apply(res.frame)                 # bright points -> star sprites, added (glints.py)
    compositor.take_stats()                 # overflows, peak -> auto Emax

``res`` is the frame's :class:`FrameResources` (frame_resources.py): the look
textures, sprite sheets, scene depth and targets every stage shares, made once
per target size by the owner of the compositor, which is only the Add layer.

:func:`advance` steps the simulation; :func:`record_frame` draws one frame from
plain data (:class:`FrameData`, a camera, :class:`Targets`), so whoever reads
the scene (``scene/renderer.py``), a test or a benchmark drives the same stages.
Everything talks to a :class:`addon.hosts.base.Host`, so the same recording
runs in Blender and, for benchmarks, under moderngl on a real GPU.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np

from .draw.compositing import Camera, Compositor
from .draw.glints import GlintStage
from .draw.sprites import SpriteLayer
from .light.light_pass import light_effects
from .light.shadow_volume import ShadowVolume
from .light.surface_shadow import SurfaceShadow
from .look.lighting import NO_LIGHTS, SceneLights, is_lit
from .order.sorting import EffectSort
from .simulate.csg import CloudParticles, Primitive
from .simulate.events import step_family
from .simulate.simulation import ParticleSystem


def advance(systems: list[ParticleSystem], dt: float, emitters_prev, emitters_cur) -> None:
    """One frame of simulation for every effect, each with its emitter's motion; an effect spawned from another
    steps with its parent, substep by substep (events.py)."""
    motion = {id(system): pair for system, *pair in zip(systems, emitters_prev, emitters_cur)}
    for system in systems:
        if system.spawner is None:
            step_family(system, dt, motion)


@dataclass(frozen=True)
class CloudFrame:
    """What the CSG cloud follows in one frame: its primitives in stack order and its glitter."""

    primitives: tuple[Primitive, ...]
    seconds: float  # since the start frame: the glitter's phase
    noise_amount: float
    noise_speed: float


@dataclass(frozen=True)
class FrameData:
    """Everything a frame's drawing takes from the scene, as plain data."""

    frame: int  # the scene frame (an incremental sort continues from the frame before)
    emitters: tuple[np.ndarray, ...]  # each effect's emitter world matrix (its sort's origin)
    ramps: tuple[np.ndarray | None, ...]  # each effect's color ramp (None: start to end colors)
    cloud: CloudFrame | None = None  # None: no CSG cloud
    lights: SceneLights = NO_LIGHTS  # what lights the lit effects (scene/lights.py)


@dataclass
class Targets:
    """Where a view's frame is drawn: the compositor, and the sprite layer, glints and the particles' shadows on
    the scene's surfaces when they are used."""

    compositor: Compositor
    sprites: SpriteLayer | None = None
    glints: GlintStage | None = None
    surface_shadow: SurfaceShadow | None = None


def follow_cloud(points: CloudParticles, cloud: CloudFrame) -> list[str]:
    """The cloud's samples for ``cloud``'s primitives and glitter; warnings about odd primitives."""
    points.cloud.update(cloud.primitives)
    points.update(cloud.seconds, cloud.noise_amount, cloud.noise_speed)
    return points.cloud.warnings


def record_frame(systems: list[ParticleSystem], sorts: list[EffectSort], data: FrameData, camera: Camera,
                 view: np.ndarray, targets: Targets, cloud: CloudParticles | None = None, draw_depth=None,
                 exact_sort: bool = False, lap=None, shadows: ShadowVolume | None = None,
                 draw_light_shadows=None) -> list[str]:
    """Everything after simulating, for one view into ``targets`` (the frame stays on the GPU): scene depth,
    looks, sorting, the CSG cloud, the lit effects' light, splat and resolve, sprites, glints.  Returns the
    cloud's warnings.

    ``view``: world to view, the depth order of sorted effects (``camera``: world to clip, and the lens);
    ``draw_depth(view_proj, scene_depth)``: the scene's depth pre-pass, when the compositor has a scene
    depth; ``exact_sort``: a full sort every frame (bakes) rather than incremental passes;
    ``lap(stage)`` (a context manager) times the stages for the Stats panel; ``shadows``: the shadow volume
    the lit effects' particles shadow each other in (None: lit without particle shadows), which
    ``targets.surface_shadow`` reads too;
    ``draw_light_shadows(lights)``: the scene's occluders drawn from each shadowed light (an OccluderMaps or
    None), which the shadow volume multiplies in.
    """
    lap = lap or (lambda stage: nullcontext())
    compositor, resources = targets.compositor, targets.compositor.resources
    if resources.depth is not None and draw_depth is not None:
        with lap("depth"):
            draw_depth(camera.view_proj, resources.depth)
    for system, ramp in zip(systems, data.ramps):
        system.ramp = ramp
    with lap("sort"):
        for sort, emitter in zip(sorts, data.emitters):
            sort.before_draw(view, emitter[:3, 3], data.frame, exact=exact_sort)
    drawn, orders = list(systems), [sort.indices for sort in sorts]
    warnings = []
    if cloud is not None:
        with lap("csg"):
            warnings = follow_cloud(cloud, data.cloud)
        drawn.append(cloud)
        orders.append(None)
    occluders = None
    if any(is_lit(system.settings) for system in systems):
        with lap("lighting"):
            occluders = draw_light_shadows(data.lights.lights) if shadows is not None and draw_light_shadows else None
            light_effects(systems, data.lights, view, resources, shadows, occluders)
    if targets.surface_shadow is not None:
        with lap("shadows on scene"):
            targets.surface_shadow.draw(systems, data.lights, camera, resources, shadows, occluders is not None)
    with lap("splat and resolve"):
        composite_into(drawn, compositor, camera, targets.sprites, orders)
    if targets.glints is not None:
        with lap("glints"):
            targets.glints.apply(resources.frame)
    return warnings


def composite_into(systems: list[ParticleSystem], compositor: Compositor, camera: Camera,
                   sprites: SpriteLayer | None = None, orders=None) -> None:
    """Composite every Add effect into the shared target, resolve, and lay the Alpha
    effects over it (each drawn in its ``orders`` entry: sorted indices, or None
    for slot order) from the compositor's FrameResources; the frame stays on the GPU
    (``compositor.resources.frame``) for the glints
    (``GlintStage.apply``, when the scene has them on)."""
    orders = orders or [None] * len(systems)
    alpha = [(system, order) for system, order in zip(systems, orders) if system.settings.blend_mode == "ALPHA"]
    for system in systems:
        if system.settings.blend_mode != "ALPHA":
            compositor.add(system, camera)
    if alpha:
        sweep = camera.shutter.close - camera.shutter.open if camera.shutter is not None else 0.0
        sprites.draw([system for system, _ in alpha], compositor.resources, camera, [order for _, order in alpha],
                     shutter=sweep, soft_distance=compositor.render.soft_distance)
    compositor.resolve(sprites.target if alpha else None)  # the sprites over the frame in the resolve's pass


def composite(systems: list[ParticleSystem], compositor: Compositor, camera: Camera,
              sprites: SpriteLayer | None = None, orders=None):
    """:func:`composite_into`, then the float frame read back."""
    composite_into(systems, compositor, camera, sprites, orders)
    return compositor.read_frame()
