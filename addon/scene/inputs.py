"""Blender objects to the engine's plain data: emitter meshes, force fields, colliders.

Read every frame (fields and colliders may be animated); anything the engine
cannot follow is skipped with a warning the bake and the panel show.
"""

from __future__ import annotations

import numpy as np

from ..engine.effectors import MAX_COLLIDERS, MAX_FORCE_FIELDS, Collider, EmitterMesh, ForceField
from ..engine.look import LOOK_SIZE
from ..engine.settings import SettingsError

SUPPORTED_FIELDS = ("WIND", "VORTEX", "FORCE", "TURBULENCE")
_SPHERE_TOLERANCE = 0.02  # relative spread of vertex distances a sphere mesh may have
_CORNER_TOLERANCE = 1e-4


def emitter_mesh(obj, depsgraph) -> EmitterMesh:
    """The evaluated mesh (modifiers applied) of ``obj``, triangulated, in object space."""
    if obj.type not in ("MESH", "CURVE", "SURFACE", "FONT", "META"):
        raise SettingsError(f"emitter '{obj.name}' ({obj.type.title()}) has no surface: emitter_shape MESH needs an object with faces")
    evaluated = obj.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    try:
        mesh.calc_loop_triangles()
        vertices = np.zeros(len(mesh.vertices) * 3, np.float64)
        mesh.vertices.foreach_get("co", vertices)
        triangles = np.zeros(len(mesh.loop_triangles) * 3, np.int64)
        mesh.loop_triangles.foreach_get("vertices", triangles)
    finally:
        evaluated.to_mesh_clear()
    if len(triangles) == 0:
        raise SettingsError(f"emitter '{obj.name}' has no faces: emitter_shape MESH needs at least one face")
    return EmitterMesh(vertices.reshape(-1, 3), triangles.reshape(-1, 3))


def is_force_field(obj) -> bool:
    return obj.field is not None and obj.field.type != "NONE"


def force_fields(scene, objects=None) -> tuple[list[ForceField], list[str]]:
    """Wind, vortex, force and turbulence fields of the scene, in world space (``objects``: the scene's, or
    those of them that may be fields, in the scene's order: scene/index.py)."""
    fields, warnings = [], []
    for obj in scene.objects if objects is None else objects:
        if not is_force_field(obj):
            continue
        settings = obj.field
        if settings.type not in SUPPORTED_FIELDS:
            warnings.append(f"force field '{obj.name}' ({settings.type.title()}) is not supported: "
                            f"only {', '.join(t.title() for t in SUPPORTED_FIELDS)} act on GPU particles")
            continue
        if len(fields) == MAX_FORCE_FIELDS:
            warnings.append(f"more than {MAX_FORCE_FIELDS} force fields: '{obj.name}' and later ones are ignored")
            break
        matrix = np.array(obj.matrix_world)
        fields.append(ForceField(
            settings.type, settings.strength, tuple(matrix[:3, 3]), tuple(matrix[:3, 2]),
            settings.falloff_power if settings.falloff_type == "SPHERE" else 0.0,
            settings.distance_max if settings.use_max_distance else 0.0,
            max(settings.size, 1e-3),
        ))
    return fields, warnings


def collider_shape(vertices: np.ndarray) -> tuple[str, np.ndarray, np.ndarray] | None:
    """(type, center, half size) of a plane, sphere or box mesh in object space; None for other shapes."""
    if len(vertices) == 0:
        return None
    low, high = vertices.min(axis=0), vertices.max(axis=0)
    center, half = (low + high) / 2, (high - low) / 2
    extent = half.max()
    if extent <= 0:
        return None
    if half[2] <= 1e-6 * extent:
        return "PLANE", center, half
    distance = np.linalg.norm(vertices - center, axis=1)
    if np.ptp(half) <= _SPHERE_TOLERANCE * extent and np.ptp(distance) <= _SPHERE_TOLERANCE * distance.max():
        radius = distance.max()
        return "SPHERE", center, np.full(3, radius)
    if np.all(np.abs(np.abs(vertices - center) - half) <= _CORNER_TOLERANCE * extent):
        return "BOX", center, half
    return None


def has_collision(obj) -> bool:
    """Whether the object has Blender's collision physics (switched on or not)."""
    return any(m.type == "COLLISION" for m in obj.modifiers)


def colliders(scene, previous: dict | None = None, objects=None) -> tuple[list[Collider], list[str]]:
    """Objects with Blender collision physics, as planes, spheres and boxes.

    ``previous`` maps collider names to their matrices one frame earlier (a moving collider); ``objects``:
    the scene's, or those of them that may collide, in the scene's order (scene/index.py)."""
    found, warnings = [], []
    for obj in scene.objects if objects is None else objects:
        if not has_collision(obj) or not obj.collision.use:
            continue
        shape = None
        if obj.type == "MESH":
            vertices = np.zeros(len(obj.data.vertices) * 3, np.float64)
            obj.data.vertices.foreach_get("co", vertices)
            shape = collider_shape(vertices.reshape(-1, 3))
        if shape is None:
            warnings.append(f"collider '{obj.name}' is not a plane, sphere or box mesh: GPU particles ignore it")
            continue
        if len(found) == MAX_COLLIDERS:
            warnings.append(f"more than {MAX_COLLIDERS} colliders: '{obj.name}' and later ones are ignored")
            break
        kind, center, half = shape
        found.append(Collider(kind, np.array(obj.matrix_world), tuple(center), tuple(half),
                              bounce=1.0 - obj.collision.damping_factor, friction=obj.collision.friction_factor,
                              previous=(previous or {}).get(obj.name), name=obj.name))
    return found, warnings


def ramp_colors(effect) -> np.ndarray | None:
    """The effect's color ramp sampled at the look table's points, or None (start to end colors)."""
    texture = effect.ramp_texture
    if texture is None or not texture.use_color_ramp:
        return None
    return np.array([texture.color_ramp.evaluate(t)[:3] for t in np.linspace(0.0, 1.0, LOOK_SIZE)], np.float32)
