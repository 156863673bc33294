"""The CSG point cloud's panel and export operator (the scene adapter is ``scene/csg.py``)."""

from __future__ import annotations

import bpy

from ..engine.settings.settings import SettingsError
from ..scene.csg import SceneCloud, point_cloud_object, scene_primitives


class GPU_PARTICLES_OT_csg_export(bpy.types.Operator):
    """Build the scene's CSG point cloud on the GPU and store it as a Point Cloud object"""

    bl_idname = "gpu_particles.csg_export"
    bl_label = "Export Point Cloud"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        from ..hosts.base import GPUMemoryError, NoGPUError, ShaderCompileError
        from ..hosts.blender import BlenderHost

        scene = context.scene
        if not scene_primitives(scene):
            self.report({"ERROR"}, "No CSG primitives: tick 'CSG Primitive' on an object first")
            return {"CANCELLED"}
        try:
            cloud = SceneCloud(scene, BlenderHost())
            for warning in cloud.follow(scene, 0.0):
                self.report({"WARNING"}, warning)
            pos, attr = cloud.cloud.read()
        except (SettingsError, NoGPUError, GPUMemoryError, ShaderCompileError) as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        if not len(pos):
            self.report({"ERROR"}, "The primitives leave no surface samples: nothing to export")
            return {"CANCELLED"}
        obj = point_cloud_object(scene, "CSG Points", pos, attr, scene.gpu_particles_csg.size)
        context.view_layer.objects.active = obj
        self.report({"INFO"}, f"Exported {len(pos):,} CSG samples to '{obj.name}'")
        return {"FINISHED"}


class GPU_PARTICLES_PT_csg(bpy.types.Panel):
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "GPU Particles"
    bl_label = "CSG Point Cloud"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        obj = context.active_object
        if obj is not None:
            p = obj.gpu_particles_csg
            layout.prop(p, "enabled")
            column = layout.column()
            column.active = p.enabled
            for name in ("shape", "mode", "order", "radius", "color"):
                column.prop(p, name)
        s = context.scene.gpu_particles_csg
        header, body = layout.panel("gpu_particles_csg_cloud", default_closed=False)
        header.prop(s, "enabled", text="Cloud")
        if body:
            body.label(text=f"{len(scene_primitives(context.scene))} primitives in the scene")
            for name in ("samples_per_primitive", "capacity", "seed", "noise_amount", "noise_speed",
                         "color_lit", "color_shade", "brightness", "size", "particle_type"):
                body.prop(s, name)
            body.operator(GPU_PARTICLES_OT_csg_export.bl_idname, icon="POINTCLOUD_DATA")


CLASSES = (GPU_PARTICLES_OT_csg_export, GPU_PARTICLES_PT_csg)
register, unregister = bpy.utils.register_classes_factory(CLASSES)
