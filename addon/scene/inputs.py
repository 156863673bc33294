"""Blender objects to the engine's plain data: emitter meshes, force fields, colliders (analytic or SDF).

Read every frame (fields and colliders may be animated); anything the engine
cannot follow is skipped with a warning the bake and the panel show.
"""

from __future__ import annotations

import math
from itertools import combinations, product

import numpy as np

from ..engine.look.look import LOOK_SIZE
from ..engine.settings.settings import SettingsError
from ..engine.simulate.effectors import MAX_COLLIDERS, MAX_FORCE_FIELDS, Collider, EmitterMesh, ForceField
from ..engine.simulate.sdf import MAX_TRIANGLES, doubled_area, is_open
from .index import changes_over_time
from .sdf_colliders import ColliderMesh, polar

SUPPORTED_FIELDS = ("WIND", "VORTEX", "FORCE", "TURBULENCE")
_SPHERE_TOLERANCE = 0.02  # relative spread of vertex distances a sphere mesh may have
# The most a sphere mesh's face may turn from facing its center (degrees): a 6 x 3 UV sphere's turn 16, a cylinder as
# tall as it is wide (its vertices as far from its center as a sphere's) 33 or more.
_SPHERE_FACE_TURN = 25.0
_CORNER_TOLERANCE = 1e-4
# What reading one collider's evaluated mesh may raise (Blender's data API, numpy): that collider alone is left out
READ_ERRORS = (KeyError, AttributeError, TypeError, ValueError, RuntimeError, MemoryError)


def emitter_mesh(obj, depsgraph) -> EmitterMesh:
    """The evaluated mesh (modifiers applied) of ``obj``, triangulated, in object space."""
    if obj.type not in ("MESH", "CURVE", "SURFACE", "FONT", "META"):
        raise SettingsError(f"emitter '{obj.name}' ({obj.type.title()}) has no surface: emitter_shape MESH needs an object with faces")
    vertices, triangles = evaluated_triangles(obj, depsgraph)
    if len(triangles) == 0:
        raise SettingsError(f"emitter '{obj.name}' has no faces: emitter_shape MESH needs at least one face")
    return EmitterMesh(vertices, triangles.astype(np.int64))


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


def collider_shape(vertices: np.ndarray, triangles: np.ndarray) -> tuple[str, np.ndarray, np.ndarray] | None:
    """(type, center, half size) of a plane, sphere or axis-aligned box mesh in object space; None for other shapes.

    From the vertices, and the faces: a box or sphere is solid, so an open mesh (a boundary edge: a glass, a box
    without its lid) is neither, whatever its vertices (its SDF is the slab behind its faces); a sphere's faces face
    its center (a cylinder as tall as it is wide has every vertex as far from its center too)."""
    if len(vertices) == 0:
        return None
    low, high = vertices.min(axis=0), vertices.max(axis=0)
    center, half = (low + high) / 2, (high - low) / 2
    extent = half.max()
    if extent <= 0:
        return None
    if half[2] <= 1e-6 * extent:
        return "PLANE", center, half
    if np.all(np.abs(np.abs(vertices - center) - half) <= _CORNER_TOLERANCE * extent):
        # before the sphere test: a cube's corners are equally far from its center
        return None if is_open(triangles) else ("BOX", center, half)
    distance = np.linalg.norm(vertices - center, axis=1)
    if (np.ptp(half) <= _SPHERE_TOLERANCE * extent and np.ptp(distance) <= _SPHERE_TOLERANCE * distance.max()
            and faces_face(vertices, triangles, center, _SPHERE_FACE_TURN) and not is_open(triangles)):
        return "SPHERE", center, np.full(3, distance.max())
    return None


def faces_face(vertices: np.ndarray, triangles: np.ndarray, center: np.ndarray, degrees: float) -> bool:
    """Whether every triangle's normal is within ``degrees`` of the line from ``center`` through its centroid
    (either way: inward normals too)."""
    a, b, c = (vertices[triangles[:, k]] for k in range(3))
    normal, out = np.cross(b - a, c - a), (a + b + c) / 3 - center
    lengths = np.linalg.norm(normal, axis=1) * np.linalg.norm(out, axis=1)
    return bool((np.abs(np.einsum("ij,ij->i", normal, out)) >= math.cos(math.radians(degrees)) * lengths).all())


def oriented_box(vertices: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(frame, half size) of a box mesh turned any way in object space: ``frame`` (4x4) maps the box's own
    centered axes to object space; None unless the mesh's distinct vertices are the 8 corners of a box."""
    if len(np.unique(np.round(vertices[:, 0], 6))) > 8:  # a box's corners: 8 x values at most (a 1D sort is
        return None  # a tenth of the rows' one, which took 2.7 s of a 1M-triangle collider's first frame)
    corners = np.unique(np.round(vertices, 6), axis=0)
    if len(corners) != 8:
        return None
    edges = corners[1:] - corners[0]
    scale = np.linalg.norm(edges, axis=1).max()
    tolerance = _CORNER_TOLERANCE * scale
    for a, b, c in combinations(range(7), 3):
        axes = edges[[a, b, c]]
        lengths = np.linalg.norm(axes, axis=1)
        if lengths.min() <= tolerance or any(abs(axes[i] @ axes[j]) > tolerance * scale
                                              for i, j in ((0, 1), (0, 2), (1, 2))):
            continue
        spanned = corners[0] + np.array(list(product((0, 1), repeat=3))) @ axes
        if all(np.abs(corners - p).max(axis=1).min() <= tolerance for p in spanned):
            frame = np.identity(4)
            frame[:3, :3] = (axes / lengths[:, None]).T
            if np.linalg.det(frame[:3, :3]) < 0:
                frame[:3, 2] *= -1
            frame[:3, 3] = corners[0] + axes.sum(axis=0) / 2
            return frame, lengths / 2
    return None


def has_collision(obj) -> bool:
    """Whether the object has Blender's collision physics (switched on or not)."""
    return any(m.type == "COLLISION" for m in obj.modifiers)


def evaluated_triangles(obj, depsgraph) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (n, 3), triangles (t, 3)) of the object's evaluated mesh (modifiers, shape keys, armature)."""
    evaluated = obj.evaluated_get(depsgraph) if depsgraph is not None else obj
    mesh = evaluated.to_mesh()
    try:
        mesh.calc_loop_triangles()
        vertices = np.zeros(len(mesh.vertices) * 3, np.float64)
        mesh.vertices.foreach_get("co", vertices)
        triangles = np.zeros(len(mesh.loop_triangles) * 3, np.int32)
        mesh.loop_triangles.foreach_get("vertices", triangles)
    finally:
        evaluated.to_mesh_clear()
    return vertices.reshape(-1, 3), triangles.reshape(-1, 3)


def response_of(obj) -> dict:
    """Blender's collision settings as the engine's Collider fields."""
    settings = obj.collision
    return {"bounce": 1.0 - settings.damping_factor, "friction": settings.friction_factor,
            "thickness": settings.thickness_outer, "stickiness": settings.stickiness,
            "permeability": settings.permeability, "kill": settings.use_particle_kill}


def with_area(vertices: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """The triangles that are not degenerate (area above a hair of the mesh's size squared)."""
    a, b, c = (vertices[triangles[:, k]] for k in range(3))
    return triangles[doubled_area(a, b, c) > 1e-12 * max(np.ptp(vertices, axis=0).max(), 1e-30) ** 2]


def sdf_mesh(obj, vertices: np.ndarray, triangles: np.ndarray, stretch: np.ndarray, resolution: int):
    """The ColliderMesh of a mesh collider whose world matrix's non-rigid part is ``stretch`` (polar), or a
    warning why it cannot be one."""
    if len(triangles) > MAX_TRIANGLES:
        return (f"collider '{obj.name}' has {len(triangles):,} triangles, more than the {MAX_TRIANGLES:,} an SDF is "
                f"built from: decimate it (GPU particles ignore it)")
    if np.linalg.det(stretch) < 0:  # a mirror turns the faces inside out: wind them back
        triangles = triangles[:, ::-1]
    return ColliderMesh.of(obj.name, vertices @ stretch.T, triangles, resolution)


class KeptShapes:
    """Each collider's reading of its evaluated mesh (triangles with area; an analytic shape, a turned box,
    or the SDF's shape-space mesh), kept while its evaluated mesh is the same (its vertices and face corners,
    kept and compared as they are: an edit from a script counts too) and, for geometry that changes over time,
    within a frame; the SDF mesh also while its scale stays: reading and analysing a large mesh again every
    frame was most of a mesh collider's frame (bench/sdf_end_to_end.py measures it)."""

    def __init__(self):
        self._shapes = {}  # name_full -> (key, (shape, box frame, vertices, triangles) or a warning)
        self._sdf = {}  # name_full -> (P, resolution, ColliderMesh or a warning)

    @staticmethod
    def _key(obj, frame: int, depsgraph):
        """(the frame where the geometry changes over time, else None; the evaluated mesh's positions and face
        corners as int32): a Geometry Nodes collider's original mesh may be empty.  Kept and compared rather
        than hashed: a comparison is cheaper than the hash it replaced (issue 44's closing note has the figures)."""
        mesh = (obj.evaluated_get(depsgraph) if depsgraph is not None else obj).data
        positions = np.empty(len(mesh.vertices) * 3, np.float32)
        corners = np.empty(len(mesh.loops), np.int32)
        for values, name, field in ((positions, "position", "vector"), (corners, ".corner_vert", "value")):
            if len(values):  # through its attributes: far cheaper than through vertices/loops
                mesh.attributes[name].data.foreach_get(field, values)  # (absent from a mesh with no such element)
        return frame if changes_over_time(obj) else None, positions.view(np.int32), corners  # bits: NaN == NaN

    def shape(self, obj, frame: int, depsgraph):
        key = self._key(obj, frame, depsgraph)
        kept = self._shapes.get(obj.name_full)
        if kept is None or kept[0][0] != key[0] or not all(map(np.array_equal, kept[0][1:], key[1:])):
            kept = self._shapes[obj.name_full] = (key, _read_shape(obj, depsgraph))
            self._sdf.pop(obj.name_full, None)
        return kept[1]

    def sdf(self, obj, vertices: np.ndarray, triangles: np.ndarray, matrix: np.ndarray):
        """(rigid matrix, ColliderMesh) of the kept mesh, or a warning: the rigid part follows ``matrix``, the
        mesh only its scale and the resolution (``shape`` forgets it with the mesh it was made from)."""
        rotation, stretch = polar(matrix[:3, :3])
        resolution = obj.gpu_particles_collider.resolution
        kept = self._sdf.get(obj.name_full)
        if kept is None or kept[1] != resolution or not np.allclose(kept[0], stretch, rtol=0.0, atol=1e-9):
            kept = self._sdf[obj.name_full] = (stretch, resolution,
                                               sdf_mesh(obj, vertices, triangles, stretch, resolution))
        if isinstance(kept[2], str):
            return kept[2]
        rigid = np.identity(4)
        rigid[:3, :3], rigid[:3, 3] = rotation, matrix[:3, 3]
        return rigid, kept[2]


KEPT_SHAPES = KeptShapes()


def _read_shape(obj, depsgraph):
    """(analytic shape or None, a turned box's frame or None, vertices, triangles with area), or why not."""
    vertices, triangles = evaluated_triangles(obj, depsgraph)
    if len(triangles) == 0:
        nodes = any(modifier.type == "NODES" for modifier in obj.original.modifiers)
        return (f"collider '{obj.name}' has no faces"
                f"{' (its Geometry Nodes make none; instances collide once realized)' if nodes else ''}: GPU particles ignore it")
    triangles = with_area(vertices, triangles)
    if len(triangles) == 0:
        return f"collider '{obj.name}' has only degenerate faces (no area): GPU particles ignore it"
    shape, box = collider_shape(vertices, triangles), None
    if shape is None and (turned := oriented_box(vertices)) is not None and not is_open(triangles):
        shape, box = ("BOX", np.zeros(3), turned[1]), turned[0]
    return shape, box, vertices, triangles


def _collider(obj, matrix: np.ndarray, previous, frame: int, depsgraph):
    """(Collider, its ColliderMesh or None) of a mesh object with collision, or a warning why it is ignored."""
    kept = KEPT_SHAPES.shape(obj, frame, depsgraph)
    if isinstance(kept, str):
        return kept
    shape, box, vertices, triangles = kept
    if box is not None:
        matrix = matrix @ box
    if shape is not None:
        kind, center, half = shape
        return Collider(kind, matrix, tuple(center), tuple(half), previous=previous, name=obj.name,
                        **response_of(obj)), None
    made = KEPT_SHAPES.sdf(obj, vertices, triangles, matrix)
    if isinstance(made, str):
        return made
    rigid, mesh = made
    return Collider("SDF", rigid, previous=previous, name=obj.name, **response_of(obj)), mesh


def colliders(scene, previous: dict | None = None, objects=None, depsgraph=None
              ) -> tuple[list[Collider], list[ColliderMesh], list[str]]:
    """Objects with Blender collision physics: planes, spheres and (oriented) boxes as themselves, every
    other mesh as an SDF collider (its shape-space triangles in the second list).

    ``previous`` maps collider names to their matrices one frame earlier (a moving collider); ``objects``:
    the scene's, or those of them that may collide, in the scene's order (scene/index.py); ``depsgraph``:
    where the evaluated meshes come from (None: the meshes as stored)."""
    found, meshes, warnings = [], [], []
    for obj in scene.objects if objects is None else objects:
        if not has_collision(obj) or not obj.collision.use:
            continue
        if obj.type != "MESH":
            warnings.append(f"collider '{obj.name}' ({obj.type.title()}) is not a mesh: GPU particles ignore it")
            continue
        matrix = np.array(obj.matrix_world)
        if abs(np.linalg.det(matrix[:3, :3])) < 1e-12:
            warnings.append(f"collider '{obj.name}' has zero scale: GPU particles ignore it")
            continue
        if len(found) == MAX_COLLIDERS:
            warnings.append(f"more than {MAX_COLLIDERS} colliders: '{obj.name}' and later ones are ignored")
            break
        try:
            made = _collider(obj, matrix, (previous or {}).get(obj.name), scene.frame_current, depsgraph)
        except READ_ERRORS as error:
            made = f"collider '{obj.name}' cannot be read ({type(error).__name__}: {error}): GPU particles ignore it"
        if isinstance(made, str):
            warnings.append(made)
            continue
        found.append(made[0])
        if made[1] is not None:
            meshes.append(made[1])
    return found, meshes, warnings


def ramp_colors(effect) -> np.ndarray | None:
    """The effect's color ramp sampled at the look table's points, or None (start to end colors)."""
    texture = effect.ramp_texture
    if texture is None or not texture.use_color_ramp:
        return None
    return np.array([texture.color_ramp.evaluate(t)[:3] for t in np.linspace(0.0, 1.0, LOOK_SIZE)], np.float32)
