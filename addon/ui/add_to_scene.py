"""Add to Scene: the baked point cache and volumes as objects that play them (output/point_cache_nodes.py,
output/volume_object.py), and the panel's word when their files are gone."""

from __future__ import annotations

import os
from pathlib import Path

import bpy

from ..output.bake import output_path
from ..output.extras import POINTS, VOLUMES, extra_path
from ..output.point_cache_nodes import MARKER, add_cache_object, modifier_input, set_input
from ..output.render_layer import frame_pattern
from ..output.volume_object import add_volume_objects, missing_volumes
from ..scene.cache import UnsavedBlendError
from ..scene.snapshot import read_snapshot
from ..scene.stage_rocks import stage_rocks


def first_cache_file(scene, extra=POINTS) -> Path:
    """The point cache (or ``extra``'s) file of the scene's first frame, where the bake writes it."""
    return extra_path(output_path(scene, scene.frame_start), extra)


def missing_caches(scene) -> list[str]:
    """A line for each point-cache object of ``scene`` whose file of the current frame is not there (a moved
    or deleted folder: Blender shows an empty frame and the node's warning; this names the path)."""
    lines = []
    for obj in scene.objects:
        for modifier in obj.modifiers:
            if modifier.type != "NODES" or modifier.node_group is None or not modifier.node_group.get(MARKER):
                continue
            files, digits, end = (modifier_input(modifier, name).value for name in ("Files", "Digits", "Files End"))
            path = bpy.path.abspath(f"{files}{scene.frame_current:0{digits}d}{end}")
            if not os.path.isfile(path):
                folder = os.path.dirname(path)
                why = "has no file for this frame" if os.path.isdir(folder) else "is missing (moved or deleted?)"
                lines.append(f"{obj.name}: point cache folder '{folder}' {why}")
    return lines


def draw_point_caches(layout, scene) -> None:
    """Add to Scene once a bake wrote a point cache, and what is missing of the caches in the scene."""
    if scene.gpu_particles_output.write_points or scene.gpu_particles_output.write_volumes:
        layout.operator(GPU_PARTICLES_OT_add_cached_geometry.bl_idname, icon="POINTCLOUD_DATA")
    for line in missing_caches(scene) + missing_volumes(scene):
        layout.label(text=line, icon="ERROR")


class GPU_PARTICLES_OT_add_cached_geometry(bpy.types.Operator):
    """Add a point cloud object that plays the baked point cache as frames change, in any Blender (no add-on
    needed): spheres in Cycles and EEVEE with motion blur, or instances of an object or collection; and a
    volume object for each effect playing the baked volumes"""

    bl_idname = "gpu_particles.add_cached_geometry"
    bl_label = "Add Point Cache to Scene"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        scene = context.scene
        try:
            first, volumes = first_cache_file(scene), first_cache_file(scene, VOLUMES)
        except UnsavedBlendError as error:
            self.report({"ERROR"}, f"Bake Output: {error}")
            return {"CANCELLED"}
        if not first.is_file() and not volumes.is_file():
            self.report({"ERROR"}, f"No point cache at '{first}' nor volumes at '{volumes}': bake with Write Point "
                                   "Cache on first (or Write Volumes)")
            return {"CANCELLED"}
        added = []
        if first.is_file():
            _, before, digits, after = frame_pattern(scene.gpu_particles_output.bake_path)
            added.append(add_cache_object(scene, first.parent, before, digits, after + POINTS.suffix))
            rocks = stage_rocks(scene)
            if rocks is not None:  # a preset's rocks (Debris): tumbling on the particles
                set_input(added[0].modifiers[0], "Instance", True)
                set_input(added[0].modifiers[0], "Instance Collection", rocks)
        if volumes.is_file():
            try:
                added += add_volume_objects(scene, volumes.parent, read_snapshot(scene).named_settings)
            except FileNotFoundError as error:
                self.report({"WARNING"} if added else {"ERROR"}, f"No Volume added: {error}")
        if not added:
            return {"CANCELLED"}
        obj = added[0]
        for other in context.selected_objects:
            other.select_set(False)
        obj.select_set(True)
        context.view_layer.objects.active = obj
        self.report({"INFO"}, f"Added {', '.join(repr(o.name) for o in added)} playing {first.parent.parent}")
        return {"FINISHED"}


register, unregister = bpy.utils.register_classes_factory((GPU_PARTICLES_OT_add_cached_geometry,))
