"""The scene's inputs, read once: what the bake plan, the simulation and the cache key share.

:class:`SceneSnapshot` is what does not change over the frame range (each
effect's validated settings and emitter mesh, the render settings, the frame
range and time step); :class:`FrameInputs` is what a frame adds (emitter and
collider matrices, force fields).  Both are frozen: nothing downstream reads
the scene again, and :func:`digest` turns either into the bytes of a cache key.
:func:`read_drawing` is what drawing a frame reads (the engine's
:class:`~..engine.pipeline.FrameData`: emitters, color ramps, the CSG cloud's
primitives), and :class:`EffectsWatch` validates the effects' settings again
only when they may have changed.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..engine.look.lighting import NO_LIGHTS, SceneLights, is_lit
from ..engine.look.look import color_per_speed, inherits_color
from ..engine.pipeline import FrameData
from ..engine.settings.settings import EffectSettings, RenderSettings, SettingsError, simulated
from ..engine.simulate.effectors import Collider, EmitterMesh, ForceField
from ..engine.simulate.events import family_parents
from ..engine.simulate.simulation import check_mesh, check_spawned, rate_warning
from ..properties import (
    effect_settings_of,
    named_clamps,
    render_settings_of,
    scene_clamps,
    scene_effects,
    simulation_range,
)
from .csg import cloud_frame, cloud_settings
from .index import edits
from .inputs import colliders, emitter_mesh, force_fields, has_collision, is_force_field, ramp_colors
from .lights import scene_lights
from .sdf_colliders import ColliderMesh


@dataclass(frozen=True)
class EffectInput:
    object_name: str
    effect_name: str
    settings: EffectSettings
    mesh: EmitterMesh | None  # the evaluated emitter mesh when the shape is MESH
    ramp: np.ndarray | None = None  # its color ramp as read with the settings (inputs.ramp_colors), or None
    target: str = ""  # the object flocking seeks (its name; empty: none)


@dataclass(frozen=True)
class SkippedEffect:
    """An enabled effect that cannot run (its settings, its mesh): left out, every other effect runs."""

    place: int  # among the scene's enabled effects (properties.scene_effects)
    object_name: str
    effect_name: str
    reason: str

    @property
    def warning(self) -> str:
        return f"effect '{self.effect_name}' on '{self.object_name}' skipped: {self.reason}"


@dataclass(frozen=True)
class SceneSnapshot:
    effects: tuple[EffectInput, ...]
    render: RenderSettings
    simulation_start: int  # properties.simulation_range: not the scene's render range
    simulation_end: int
    seconds_per_frame: float
    cloud: tuple | None = None  # the CSG cloud's settings (csg.cloud_settings), None without a cloud
    skipped: tuple[SkippedEffect, ...] = ()  # the scene's enabled effects left out, with why
    clamps: tuple[str, ...] = ()  # settings read past their bounds, clamped: "Emitter/Crackle: Spawn Count 0 raised to 1"

    def runnable(self, found: list) -> list:
        """Of ``found``, the scene's enabled effects as read with this snapshot, those it holds (all but the
        skipped): what lines up with its effects."""
        places = {skipped.place for skipped in self.skipped}
        return [pair for place, pair in enumerate(found) if place not in places] if places else found

    @property
    def named_settings(self) -> list[tuple[str, EffectSettings]]:
        """(emitter name, settings) per effect: what ``SceneRenderer.effects`` has always been."""
        return [(e.object_name, e.settings) for e in self.effects]

    def effect_key(self, index: int) -> bytes:
        """Everything of one effect that holds for the whole range and shapes its simulation (the settings but
        their look, settings.LOOK_FIELDS; the mesh, time step and simulation start; the colors it inherits):
        an edit that leaves it keeps the simulated history and the disk cache."""
        return self._effect_keys[index]

    @cached_property
    def _effect_keys(self) -> tuple[bytes, ...]:
        """Every effect's key, hashed once a snapshot (a look edit compares the simulated snapshot's with a new
        one's: its emitter meshes are not hashed again)."""
        keys = []
        for index, effect in enumerate(self.effects):
            mesh = (effect.mesh.vertices, effect.mesh.triangles) if effect.mesh is not None else ()
            keys.append(digest(effect.object_name, simulated(effect.settings), *mesh, self.seconds_per_frame,
                               self.simulation_start, self._inherited_colors(index)))
        return tuple(keys)

    @cached_property
    def parents(self) -> list[int | None]:
        """Each effect's parent index (events.family_parents), None where it is emitted or refused."""
        return family_parents([e.settings.spawn_from for e in self.effects],
                              [(e.object_name, e.effect_name) for e in self.effects])[0]

    def _inherited_colors(self, index: int) -> list:
        """The parent's colors (start and end, its ramp, by speed or age) an effect that inherits them mixes into
        its births' tint (part of its history)."""
        parent = self.parents[index]
        if parent is None or not inherits_color(self.effects[index].settings):
            return []
        effect = self.effects[parent]
        ramp = [] if effect.ramp is None else [effect.ramp]
        return [effect.settings.color_start, effect.settings.color_end, color_per_speed(effect.settings), *ramp]

    @property
    def inherited_ramps(self) -> tuple[bytes, ...]:
        """The color ramps its spawned effects inherit colors from, as :func:`inherited_ramps` reads them."""
        return tuple(b"" if self.effects[parent].ramp is None else self.effects[parent].ramp.tobytes()
                     for effect, parent in zip(self.effects, self.parents)
                     if parent is not None and effect.settings.spawn_inherit_color > 0.0)

    def rate_warnings(self) -> list[str]:
        return [f"effect on '{e.object_name}': {w}" for e in self.effects if (w := rate_warning(e.settings))]


@dataclass(frozen=True)
class FrameInputs:
    frame: int
    emitters: tuple[np.ndarray, ...]  # world matrix of each effect's emitter
    fields: tuple[ForceField, ...]
    colliders: tuple[Collider, ...]
    warnings: tuple[str, ...]
    collider_meshes: tuple[ColliderMesh, ...] = ()  # the SDF colliders' shape-space triangles
    targets: tuple[np.ndarray | None, ...] = ()  # each effect's flocking target, a world position, or None

    @property
    def collider_matrices(self) -> dict:
        return {c.name: c.matrix for c in self.colliders}

    def key(self, index: int) -> bytes:
        """What this frame adds to effect ``index``'s history (its emitter, every field and collider)."""
        return digest(self.frame, self.emitters[index], [vars(f) for f in self.fields],
                      [(c.type, c.matrix, c.center, c.half_size, c.bounce, c.friction, c.thickness, c.stickiness,
                        c.permeability, c.kill) for c in self.colliders],
                      [(m.name, m.fingerprint) for m in self.collider_meshes],
                      self.targets[index] if self.targets else None)


def _feed(h, value) -> None:
    if isinstance(value, np.ndarray):
        # float32 as the GPU sees it: the F-curve path and frame_set agree to the last float64 bit rarely
        array = value.astype(np.float32) if value.dtype.kind == "f" else value
        h.update(f"a{array.dtype.str}{array.shape}".encode())
        h.update(np.ascontiguousarray(array).tobytes())
    elif isinstance(value, dict):
        for name in sorted(value):
            _feed(h, name)
            _feed(h, value[name])
    elif isinstance(value, (list, tuple)):
        h.update(f"l{len(value)}".encode())
        for item in value:
            _feed(h, item)
    elif isinstance(value, float):
        h.update(np.float32(value).tobytes())
    else:
        h.update(repr(value).encode())


def digest(*values) -> bytes:
    h = hashlib.sha256()
    _feed(h, values)
    return h.digest()


def scene_seconds_per_frame(scene) -> float:
    return scene.render.fps_base / scene.render.fps


def scene_depsgraph(scene):
    """The depsgraph evaluated meshes and the camera come from: the first view layer's (None without one)."""
    return scene.view_layers[0].depsgraph if scene.view_layers else None


def read_snapshot(scene) -> SceneSnapshot:
    """Every enabled effect's settings and mesh and the render settings, once; an effect that cannot run is
    skipped, named with why (``SceneSnapshot.skipped``), and the others run."""
    depsgraph = scene_depsgraph(scene)
    effects, skipped, clamps = [], [], scene_clamps(scene)
    for place, (obj, effect) in enumerate(scene_effects(scene)):
        try:
            settings = effect_settings_of(effect)
            check_spawned(settings)
            mesh = emitter_mesh(obj, depsgraph) if settings.emitter_shape == "MESH" else None
            check_mesh(settings, mesh)
        except SettingsError as error:
            skipped.append(SkippedEffect(place, obj.name, effect.name, str(error)))
            continue
        target = effect.flock_target.name if effect.flock_target is not None else ""
        effects.append(EffectInput(obj.name, effect.name, settings, mesh, ramp_colors(effect), target))
        clamps += named_clamps(obj, effect)
    return SceneSnapshot(tuple(effects), render_settings_of(scene), *simulation_range(scene),
                         scene_seconds_per_frame(scene), cloud=cloud_settings(scene), skipped=tuple(skipped),
                         clamps=tuple(clamps))


def inherited_ramps(found) -> tuple[bytes, ...]:
    """The color ramps spawned effects inherit colors from (their parents' ramps as read now; ``found``: the
    (object, effect) pairs of the scene's effects): an edit of one changes those children's history, which the
    effects' settings alone do not show."""
    parents, _ = family_parents([effect.spawn_from for _, effect in found],
                                [(obj.name, effect.name) for obj, effect in found])
    ramps = [ramp_colors(found[parent][1]) for (_, effect), parent in zip(found, parents)
             if parent is not None and effect.spawn_inherit_color > 0.0]
    return tuple(b"" if ramp is None else ramp.tobytes() for ramp in ramps)


def read_frame(scene, frame: int, emitters: list[np.ndarray], previous: FrameInputs | None,
               objects_of, targets: tuple[str, ...] = ()) -> FrameInputs:
    """Fields and colliders of ``scene`` as it is now (at ``frame``), colliders moving from ``previous``;
    ``objects_of(test)``: the scene's objects that may pass ``test`` (scene/index.py); ``targets``: each
    effect's flocking target by name (EffectInput.target), read as world positions."""
    fields, field_warnings = force_fields(scene, objects_of(is_force_field))
    found, meshes, collider_warnings = colliders(
        scene, previous.collider_matrices if previous is not None else None, objects_of(has_collision),
        scene_depsgraph(scene))
    located = tuple(None if (obj := scene.objects.get(name) if name else None) is None
                    else np.array(obj.matrix_world.translation, np.float64) for name in targets)
    return FrameInputs(frame, tuple(np.asarray(m, np.float64) for m in emitters), tuple(fields), tuple(found),
                       tuple(field_warnings + collider_warnings), tuple(meshes), located)


def read_drawing(scene, frame: int, emitters: list[np.ndarray], effects, cloud_objects=None,
                 light_objects=None) -> FrameData:
    """What drawing ``frame`` takes from ``scene`` as it is now: ``emitters`` (each effect's world matrix),
    the color ramps of ``effects`` ((object, effect) pairs: editing a ramp recolors without re-simulating),
    given ``cloud_objects`` (the objects that may be CSG primitives) the cloud's primitives and, when an effect
    is lit, the lights (``light_objects``: the objects that may be lights, None: the scene's)."""
    cloud = None
    if cloud_objects is not None:
        seconds = (frame - simulation_range(scene)[0]) * scene_seconds_per_frame(scene)
        cloud = cloud_frame(scene, seconds, cloud_objects)
    return FrameData(frame, tuple(emitters), tuple(ramp_colors(effect) for _, effect in effects), cloud,
                     read_lights(scene, emitters, effects, light_objects))


def read_lights(scene, emitters: list[np.ndarray], effects, objects=None) -> SceneLights:
    """The lights of the lit ``effects`` (ranked at their emitters' center), none when no effect is lit; a
    lit scene without light and with a black World warns (its lit particles are black)."""
    lit = [np.asarray(m)[:3, 3] for m, (_, effect) in zip(emitters, effects) if is_lit(effect)]
    if not lit:
        return NO_LIGHTS
    lights = scene_lights(scene, np.mean(lit, axis=0), objects)
    if lights.dark:
        names = ", ".join(f"'{obj.name}'" for obj, effect in effects if is_lit(effect))
        warning = (f"lit with no light: the lit effects on {names} are black (add a light, brighten the World, "
                   "or set Lighting to Emission)")
        lights = dataclasses.replace(lights, warnings=(*lights.warnings, warning))
    return lights


def keys_settings(obj) -> bool:
    """Whether a key or driver may set one of the object's effect settings (they change with the frame)."""
    from bpy_extras.anim_utils import animdata_get_channelbag_for_assigned_slot

    animation = obj.animation_data
    if animation is None:
        return False
    if len(animation.nla_tracks):
        return True
    bag = animdata_get_channelbag_for_assigned_slot(animation)
    curves = [*animation.drivers, *(bag.fcurves if bag is not None else ())]
    return any(curve.data_path.startswith("gpu_particles.") for curve in curves)


class EffectsWatch:
    """(emitter name, validated settings) of the scene's effects, read again only when they may have changed:
    after an edit (``index.scene_edited``: the viewport's handlers and a setting's update), when the effects
    themselves changed (added, removed, switched off, their object deleted) or, where a key or driver sets
    a setting, on another frame; and the scene as a snapshot, read again only when what the watch sees of it
    changed (what that costs: edits.edit_between)."""

    def __init__(self):
        self._key = None
        self._effects: list[tuple[str, EffectSettings]] = []
        self._keyed = (None, False)  # (edits and effects, whether a key or driver sets a setting of them)

    @property
    def keyed(self) -> bool:
        """Whether a key or driver sets a setting of the effects last read (they change with the frame)."""
        return self._keyed[1]

    def effects(self, found, frame: int) -> list[tuple[str, EffectSettings]]:
        """``found``: (object, effect) of every enabled effect (``properties.scene_effects``) now."""
        effects = (edits(), tuple((obj.name, effect.as_pointer()) for obj, effect in found))
        if effects != self._keyed[0]:  # keys and drivers change only by an edit: asked once per edit
            self._keyed = (effects, any(map(keys_settings, {obj.name: obj for obj, _ in found}.values())))
        key = (*effects, frame if self._keyed[1] else None)
        if key != self._key:
            self._effects = [(obj.name, effect_settings_of(effect)) for obj, effect in found]
            self._key = key  # once read: a SettingsError is raised again on the next call
        return self._effects

    def snapshot(self, scene, found, frame: int, kept: SceneSnapshot | None, cloud_objects=None) -> SceneSnapshot:
        """The scene now: ``kept`` (a simulation's snapshot, or None) while the effects' settings are as it holds
        them, else read again.  ``cloud_objects`` (a draw's: the objects that may be CSG primitives): a draw also
        sees the render settings, the CSG cloud's and the ramps spawned effects inherit, all read anyway."""
        effects = self.effects(found, frame)
        if kept is not None and effects == kept.named_settings and (cloud_objects is None or (
                render_settings_of(scene) == kept.render and cloud_settings(scene, cloud_objects) == kept.cloud
                and inherited_ramps(found) == kept.inherited_ramps)):
            return kept
        return read_snapshot(scene)
