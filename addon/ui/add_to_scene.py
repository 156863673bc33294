"""Add to Scene: the baked point cache as an object that plays it (output/point_cache_nodes.py), and the
panel's word when a cache object's files are gone."""

from __future__ import annotations

import os
from pathlib import Path

import bpy

from ..output.bake import output_path
from ..output.extras import POINTS, extra_path
from ..output.point_cache_nodes import MARKER, add_cache_object, modifier_input
from ..scene.cache import UnsavedBlendError


def first_cache_file(scene) -> Path:
    """The point cache file of the scene's first frame, where the bake writes it."""
    return extra_path(output_path(scene, scene.frame_start), POINTS)


def missing_caches(scene) -> list[str]:
    """A line for each point-cache object of ``scene`` whose file of the current frame is not there (a moved
    or deleted folder: Blender shows an empty frame and the node's warning; this names the path)."""
    lines = []
    for obj in scene.objects:
        for modifier in obj.modifiers:
            if modifier.type != "NODES" or modifier.node_group is None or not modifier.node_group.get(MARKER):
                continue
            digits = modifier_input(modifier, "Digits").value
            path = bpy.path.abspath(f"{modifier_input(modifier, 'Files').value}{scene.frame_current:0{digits}d}.ply")
            if not os.path.isfile(path):
                folder = os.path.dirname(path)
                why = "has no file for this frame" if os.path.isdir(folder) else "is missing (moved or deleted?)"
                lines.append(f"{obj.name}: point cache folder '{folder}' {why}")
    return lines


def draw_point_caches(layout, scene) -> None:
    """Add to Scene once a bake wrote a point cache, and what is missing of the caches in the scene."""
    if scene.gpu_particles_output.write_points:
        layout.operator(GPU_PARTICLES_OT_add_cached_geometry.bl_idname, icon="POINTCLOUD_DATA")
    for line in missing_caches(scene):
        layout.label(text=line, icon="ERROR")


class GPU_PARTICLES_OT_add_cached_geometry(bpy.types.Operator):
    """Add a point cloud object that plays the baked point cache as frames change, in any Blender (no add-on
    needed): spheres in Cycles and EEVEE with motion blur, or instances of an object or collection"""

    bl_idname = "gpu_particles.add_cached_geometry"
    bl_label = "Add Point Cache to Scene"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        scene = context.scene
        try:
            first = first_cache_file(scene)
        except UnsavedBlendError as error:
            self.report({"ERROR"}, f"Bake Output: {error}")
            return {"CANCELLED"}
        if not first.is_file():
            self.report({"ERROR"}, f"No point cache at '{first}': bake with Write Point Cache on first")
            return {"CANCELLED"}
        obj = add_cache_object(scene, first)
        for other in context.selected_objects:
            other.select_set(False)
        obj.select_set(True)
        context.view_layer.objects.active = obj
        self.report({"INFO"}, f"Added '{obj.name}' playing {first.parent}")
        return {"FINISHED"}


register, unregister = bpy.utils.register_classes_factory((GPU_PARTICLES_OT_add_cached_geometry,))
