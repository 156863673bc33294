"""Depth pre-pass: the scene's opaque meshes drawn into the splat's scene depth.

Blender glue for :mod:`addon.engine.depth`: evaluated mesh triangles of every
mesh object that renders and is not blended-transparent, drawn by the
add-on's own depth-only shader with the particle camera's matrix.  The
viewport keeps each occluder's triangles between draws (:class:`KeptMeshes`):
reading a heavy mesh every draw (``to_mesh``) would cost more than the particles.
"""

from __future__ import annotations

import gc
import weakref
from contextlib import contextmanager

import gpu
import numpy as np
from gpu_extras.batch import batch_for_shader

from .engine.depth import DEPTH_PREPASS
from .hosts.base import column_major
from .hosts.blender import shader_info


def _shader():
    """engine.depth.DEPTH_PREPASS; its fragment output is required by the create-info, nothing is bound to it."""
    return gpu.shader.create_from_info(shader_info(gpu, DEPTH_PREPASS))


def _is_opaque(obj) -> bool:
    return not any(
        slot.material is not None and getattr(slot.material, "surface_render_method", "DITHERED") == "BLENDED"
        for slot in obj.material_slots
    )


def occluders(scene, depsgraph):
    """Evaluated mesh objects that render and hide what is behind them."""
    for obj in scene.objects:
        if obj.type == "MESH" and not obj.hide_render and obj.visible_get() and _is_opaque(obj):
            yield obj.evaluated_get(depsgraph)


def mesh_triangles(obj) -> tuple[np.ndarray, np.ndarray]:
    """(vertex positions, triangle indices) of an evaluated mesh object, in object space."""
    mesh = obj.to_mesh()
    try:
        mesh.calc_loop_triangles()
        positions = np.empty((len(mesh.vertices), 3), np.float32)
        mesh.vertices.foreach_get("co", positions.ravel())
        triangles = np.empty((len(mesh.loop_triangles), 3), np.int32)
        mesh.loop_triangles.foreach_get("vertices", triangles.ravel())
    finally:
        obj.to_mesh_clear()
    return positions, triangles


_edits = 0  # edits so far (geometry_edited): kept triangles older than the last edit are read again


def geometry_edited(*args) -> None:
    """A handler (depsgraph update, undo, redo): any mesh may have changed, kept triangles are stale."""
    global _edits
    _edits += 1


def _changes_over_time(obj) -> bool:
    """Geometry that can differ from frame to frame without an edit: modifiers (armatures, physics,
    geometry nodes, ...), shape keys, animated or driven mesh data."""
    original = obj.original
    return bool(original.modifiers) or original.data.shape_keys is not None or original.data.animation_data is not None


class KeptMeshes:
    """Occluder triangles kept between draws, by object name: read again after an edit
    (``geometry_edited``, which the viewport's handlers call) or, for geometry that changes over time,
    on another frame."""

    def __init__(self):
        self._kept = {}  # name -> (edits, frame, (positions, triangles))

    def triangles(self, obj, frame: int) -> tuple[np.ndarray, np.ndarray]:
        kept = self._kept.get(obj.name)
        if kept is None or kept[0] != _edits or (kept[1] != frame and _changes_over_time(obj)):
            kept = self._kept[obj.name] = (_edits, frame, mesh_triangles(obj))
        return kept[2]

    def keep_only(self, names) -> None:
        """Forget objects that are no longer occluders (deleted, hidden, renamed)."""
        for name in self._kept.keys() - set(names):
            del self._kept[name]


@contextmanager
def no_collection():
    """The garbage collector held off: a collection inside the pre-pass (batch_for_shader allocates) can free
    an unreachable renderer's GPU objects while this framebuffer is bound, which crashed Blender (llvmpipe,
    intermittently, in batch.draw)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _same_view(a, b) -> bool:
    """Two (view_proj, meshes) views of the occluders that give the same depth (kept triangles are the
    same arrays: no comparison of their values)."""
    (matrix_a, meshes_a), (matrix_b, meshes_b) = a, b
    return (np.array_equal(matrix_a, matrix_b) and len(meshes_a) == len(meshes_b)
            and all(x is y or np.array_equal(x, y) for mesh_a, mesh_b in zip(meshes_a, meshes_b)
                    for x, y in zip((*mesh_a[0], mesh_a[1]), (*mesh_b[0], mesh_b[1]))))


class DepthPrepass:
    """Draws a scene's occluders into a :class:`~addon.engine.depth.SceneDepth` and builds its tiles.

    ``kept``: a :class:`KeptMeshes` to take the occluders' triangles from (the viewport's, whose
    handlers report edits), or None: read every draw (a bake reads each frame once)."""

    def __init__(self, kept: KeptMeshes | None = None):
        self.shader = _shader()
        self.kept = kept
        self._drawn = weakref.WeakKeyDictionary()  # SceneDepth -> the (view_proj, meshes) its depth holds

    def _meshes(self, scene, depsgraph) -> list:
        """((positions, triangles), world matrix) of every occluder."""
        found = list(occluders(scene, depsgraph))
        if self.kept is None:
            return [(mesh_triangles(obj), np.array(obj.matrix_world)) for obj in found]
        self.kept.keep_only(obj.name for obj in found)
        return [(self.kept.triangles(obj, scene.frame_current), np.array(obj.matrix_world)) for obj in found]

    def draw(self, scene, depsgraph, view_proj, scene_depth) -> None:
        """Depth of every occluder (1.0 where there is none), unless the depth already holds these
        meshes from this view (a playing viewport over a still scene: nothing to draw again).

        The meshes are read and their batches made before the framebuffer is bound: reading an evaluated
        mesh makes and frees Blender data (to_mesh), which has no business inside our bind."""
        meshes = self._meshes(scene, depsgraph)
        view = (np.array(view_proj, np.float64), meshes)
        drawn = self._drawn.get(scene_depth)
        if drawn is not None and _same_view(drawn, view):
            return
        self._drawn[scene_depth] = view
        framebuffer = scene_depth.host.framebuffer(None, scene_depth.depth)
        with no_collection():
            batches = [(batch_for_shader(self.shader, "TRIS", {"position": positions}, indices=triangles), model)
                       for (positions, triangles), model in meshes if len(triangles)]
            with framebuffer.bind():
                framebuffer.clear(depth=1.0)
                gpu.state.viewport_set(0, 0, scene_depth.width, scene_depth.height)
                gpu.state.depth_test_set("LESS_EQUAL")
                gpu.state.depth_mask_set(True)
                gpu.state.face_culling_set("NONE")
                self.shader.bind()
                self.shader.uniform_float("view_proj", column_major(view_proj))
                for batch, model in batches:
                    self.shader.uniform_float("model", column_major(model))
                    batch.draw(self.shader)
                gpu.state.depth_mask_set(False)
                gpu.state.depth_test_set("NONE")
                gpu.shader.unbind()  # a pre-pass freed with its renderer must not be the bound shader
        scene_depth.build_coarse()
