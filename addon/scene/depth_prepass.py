"""Depth pre-pass: the scene's opaque meshes drawn into the splat's scene depth.

Blender glue for :mod:`addon.engine.draw.depth`: evaluated mesh triangles of every
mesh object the camera sees (``visibility.py``: render visibility in renders and
bakes, viewport visibility in the overlay) and is not blended-transparent, drawn by the
add-on's own depth-only shader with the particle camera's matrix.  The
viewport keeps each occluder's triangles between draws (:class:`KeptMeshes`):
reading a heavy mesh every draw (``to_mesh``) would cost more than the particles.
"""

from __future__ import annotations

import gc
import weakref
from contextlib import contextmanager
from dataclasses import dataclass

import gpu
import numpy as np
from gpu_extras.batch import batch_for_shader

from ..engine.draw.depth import DEPTH_PREPASS
from ..hosts.base import column_major
from ..hosts.blender import shader_info
from .index import SceneIndex, changes_over_time, edits
from .visibility import render_visibility


def _shader():
    """engine.depth.DEPTH_PREPASS; its fragment output is required by the create-info, nothing is bound to it."""
    return gpu.shader.create_from_info(shader_info(gpu, DEPTH_PREPASS))


def _is_opaque(obj) -> bool:
    return not any(
        slot.material is not None and getattr(slot.material, "surface_render_method", "DITHERED") == "BLENDED"
        for slot in obj.material_slots
    )


def may_occlude(obj) -> bool:
    """The overlay's occluders: a mesh object the viewport shows (``visible_get``, the context's view layer)
    whose materials hide what is behind it."""
    return obj.type == "MESH" and obj.visible_get() and _is_opaque(obj)


def occluders(scene, depsgraph, shadows: bool = False):
    """Evaluated mesh objects a render of ``depsgraph``'s view layer sees hiding what is behind them
    (``shadows``: every mesh that renders, which casts shadows on the particles), whatever the viewport shows."""
    visibility = render_visibility(scene, depsgraph)
    renders = visibility.shadows if shadows else visibility.occludes
    for obj in scene.objects:
        if obj.type == "MESH" and renders(obj) and _is_opaque(obj):
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


class KeptMeshes:
    """Occluder triangles kept between draws, by object (``name_full``: linked objects may share a
    name): read again after an edit (``index.scene_edited``, which the viewport's handlers call)
    or, for geometry that changes over time, on another frame.  Which objects occlude comes from a
    :class:`~addon.scene.index.SceneIndex` (kept until an edit too)."""

    def __init__(self, index: SceneIndex):
        self.index = index
        self._kept = {}  # name_full -> (edits, frame, changes over time, (positions, triangles))
        self._meshes = None  # (occluders, edits, frame, any changes over time, their meshes) of the last call

    def triangles(self, obj, frame: int, depsgraph) -> tuple[np.ndarray, np.ndarray]:
        """``obj``'s triangles (its evaluated mesh in ``depsgraph``), kept or read now."""
        kept = self._kept.get(obj.name_full)
        if kept is None or kept[0] != edits() or (kept[2] and kept[1] != frame):
            kept = (edits(), frame, changes_over_time(obj), mesh_triangles(obj.evaluated_get(depsgraph)))
            self._kept[obj.name_full] = kept
        return kept[3]

    def occluders(self, scene, depsgraph) -> tuple[list, np.ndarray]:
        """Every occluder's (positions, triangles) and its world matrix, (occluders, 4, 4).  The matrices
        are the scene objects' own, all read at once: the viewport's depsgraph is the active one, whose
        evaluated transforms Blender writes back to them.  The list of meshes is the last call's own
        when none can have changed (a still scene: the pre-pass compares no arrays)."""
        objects = scene.objects
        columns = np.empty(len(objects) * 16, np.float32)
        objects.foreach_get("matrix_world", columns)  # column-major, as Blender stores matrices
        chosen = self.index.indexed(scene, may_occlude)
        models = columns.reshape(-1, 4, 4)[[place for place, _ in chosen]].transpose(0, 2, 1).astype(np.float64)
        frame, last = scene.frame_current, self._meshes
        if last is not None and last[0] is chosen and last[1] == edits() and not (last[3] and last[2] != frame):
            return last[4], models
        self.keep_only(obj.name_full for _, obj in chosen)
        meshes = [self.triangles(obj, frame, depsgraph) for _, obj in chosen]
        changing = any(self._kept[obj.name_full][2] for _, obj in chosen)
        self._meshes = (chosen, edits(), frame, changing, meshes)
        return meshes, models

    def keep_only(self, names) -> None:
        """Forget objects (by ``name_full``) that are no longer occluders (deleted, hidden, renamed)."""
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


@dataclass
class _View:
    """What a pre-pass draws: the view, and every occluder's triangles and world matrix."""

    view_proj: np.ndarray
    meshes: list  # (positions, triangles) of each occluder
    models: np.ndarray  # (occluders, 4, 4) world matrices

    def same_depth(self, other: _View) -> bool:
        """Whether drawing ``other`` gives this depth (kept triangles are the same arrays, and an unchanged
        list of them the same list: no values compared)."""
        return (np.array_equal(self.view_proj, other.view_proj) and np.array_equal(self.models, other.models)
                and (self.meshes is other.meshes
                     or len(self.meshes) == len(other.meshes)
                     and all(x is y or np.array_equal(x, y)
                             for a, b in zip(self.meshes, other.meshes) for x, y in zip(a, b))))


def draw_depths(shader, framebuffer, meshes, models, views) -> None:
    """Clear ``framebuffer``'s depth, then draw ``meshes`` (positions, triangles) at ``models`` into it once
    per (viewport rectangle, view-projection) of ``views``: the pre-pass's one view, the shadow maps' several."""
    with no_collection():
        batches = [(batch_for_shader(shader, "TRIS", {"position": positions}, indices=triangles), model)
                   for (positions, triangles), model in zip(meshes, models) if len(triangles)]
        with framebuffer.bind():
            framebuffer.clear(depth=1.0)
            gpu.state.depth_test_set("LESS_EQUAL")
            gpu.state.depth_mask_set(True)
            gpu.state.face_culling_set("NONE")
            shader.bind()
            for viewport, view_proj in views:
                gpu.state.viewport_set(*viewport)
                shader.uniform_float("view_proj", column_major(view_proj))
                for batch, model in batches:
                    shader.uniform_float("model", column_major(model))
                    batch.draw(shader)
            gpu.state.depth_mask_set(False)
            gpu.state.depth_test_set("NONE")
            gpu.shader.unbind()  # a pass freed with its renderer must not be the bound shader


class DepthPrepass:
    """Draws a scene's occluders into a :class:`~addon.engine.draw.depth.SceneDepth` and builds its tiles.

    ``kept``: a :class:`KeptMeshes` to take the occluders' triangles from (the viewport's, whose
    handlers report edits), or None: read every draw (a bake reads each frame once)."""

    def __init__(self, kept: KeptMeshes | None = None):
        self.shader = _shader()
        self.kept = kept
        self._drawn = weakref.WeakKeyDictionary()  # SceneDepth -> the _View its depth holds

    def _view(self, scene, depsgraph, view_proj) -> _View:
        if self.kept is None:
            found = list(occluders(scene, depsgraph))
            meshes = [mesh_triangles(obj) for obj in found]
            models = np.array([obj.matrix_world for obj in found], np.float64).reshape(-1, 4, 4)
        else:
            meshes, models = self.kept.occluders(scene, depsgraph)
        return _View(np.array(view_proj, np.float64), meshes, models)

    def draw(self, scene, depsgraph, view_proj, scene_depth) -> None:
        """Depth of every occluder (1.0 where there is none), unless the depth already holds these
        meshes from this view (a playing viewport over a still scene: nothing to draw again).

        The meshes are read and their batches made before the framebuffer is bound: reading an evaluated
        mesh makes and frees Blender data (to_mesh), which has no business inside our bind."""
        view = self._view(scene, depsgraph, view_proj)
        drawn = self._drawn.get(scene_depth)
        if drawn is not None and drawn.same_depth(view):
            return
        self._drawn[scene_depth] = view
        framebuffer = scene_depth.host.framebuffer(None, scene_depth.depth)
        draw_depths(self.shader, framebuffer, view.meshes, view.models,
                    [((0, 0, scene_depth.width, scene_depth.height), view_proj)])
        scene_depth.build_coarse()
