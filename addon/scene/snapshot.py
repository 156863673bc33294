"""The scene's inputs, read once: what the bake plan, the simulation and the cache key share.

:class:`SceneSnapshot` is what does not change over the frame range (each
effect's validated settings and emitter mesh, the render settings, the frame
range and time step); :class:`FrameInputs` is what a frame adds (emitter and
collider matrices, force fields).  Both are frozen: nothing downstream reads
the scene again, and :func:`digest` turns either into the bytes of a cache key.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from ..engine.effectors import Collider, EmitterMesh, ForceField
from ..engine.settings import EffectSettings, RenderSettings, SettingsError, as_dict
from ..engine.simulation import rate_warning
from ..properties import effect_settings_of, render_settings_of, scene_effects
from .inputs import colliders, emitter_mesh, force_fields, has_collision, is_force_field


@dataclass(frozen=True)
class EffectInput:
    object_name: str
    effect_name: str
    settings: EffectSettings
    mesh: EmitterMesh | None  # the evaluated emitter mesh when the shape is MESH


@dataclass(frozen=True)
class SceneSnapshot:
    effects: tuple[EffectInput, ...]
    render: RenderSettings
    frame_start: int
    frame_end: int
    frame_step: int
    seconds_per_frame: float

    @property
    def named_settings(self) -> list[tuple[str, EffectSettings]]:
        """(emitter name, settings) per effect: what ``SceneRenderer.effects`` has always been."""
        return [(e.object_name, e.settings) for e in self.effects]

    def effect_key(self, index: int) -> bytes:
        """Everything of one effect that holds for the whole range (settings, mesh, time step, start)."""
        effect = self.effects[index]
        mesh = (effect.mesh.vertices, effect.mesh.triangles) if effect.mesh is not None else ()
        return digest(effect.object_name, as_dict(effect.settings), *mesh, self.seconds_per_frame, self.frame_start)

    def rate_warnings(self) -> list[str]:
        return [f"effect on '{e.object_name}': {w}" for e in self.effects if (w := rate_warning(e.settings))]


@dataclass(frozen=True)
class FrameInputs:
    frame: int
    emitters: tuple[np.ndarray, ...]  # world matrix of each effect's emitter
    fields: tuple[ForceField, ...]
    colliders: tuple[Collider, ...]
    warnings: tuple[str, ...]

    @property
    def collider_matrices(self) -> dict:
        return {c.name: c.matrix for c in self.colliders}

    def key(self, index: int) -> bytes:
        """What this frame adds to effect ``index``'s history (its emitter, every field and collider)."""
        return digest(self.frame, self.emitters[index], [vars(f) for f in self.fields],
                      [(c.type, c.matrix, c.center, c.half_size, c.bounce, c.friction) for c in self.colliders])


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


def read_snapshot(scene) -> SceneSnapshot:
    """Every enabled effect's settings and mesh and the render settings, once (SettingsError says which)."""
    depsgraph = scene.view_layers[0].depsgraph if scene.view_layers else None
    effects = []
    for obj, effect in scene_effects(scene):
        try:
            settings = effect_settings_of(effect)
            mesh = emitter_mesh(obj, depsgraph) if settings.emitter_shape == "MESH" else None
        except SettingsError as error:
            raise SettingsError(f"Effect '{effect.name}' on '{obj.name}': {error}") from None
        effects.append(EffectInput(obj.name, effect.name, settings, mesh))
    return SceneSnapshot(tuple(effects), render_settings_of(scene), scene.frame_start, scene.frame_end,
                         scene.frame_step, scene.render.fps_base / scene.render.fps)


def read_frame(scene, frame: int, emitters: list[np.ndarray], previous: FrameInputs | None,
               objects_of) -> FrameInputs:
    """Fields and colliders of ``scene`` as it is now (at ``frame``), colliders moving from ``previous``;
    ``objects_of(test)``: the scene's objects that may pass ``test`` (scene/index.py)."""
    fields, field_warnings = force_fields(scene, objects_of(is_force_field))
    found, collider_warnings = colliders(scene, previous.collider_matrices if previous is not None else None,
                                         objects_of(has_collision))
    return FrameInputs(frame, tuple(np.asarray(m, np.float64) for m in emitters), tuple(fields), tuple(found),
                       tuple(field_warnings + collider_warnings))
