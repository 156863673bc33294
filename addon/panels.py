"""View3D sidebar panel: effects of the active object and the scene bake."""

from __future__ import annotations

import bpy

from .engine.settings import EFFECT_FIELDS

SECTIONS = (
    ("Emission", ("count", "emission", "emitter_shape", "emitter_radius", "lifetime", "lifetime_random",
                  "velocity", "velocity_random", "inherit_velocity", "preroll", "seed")),
    ("Forces", ("gravity", "drag", "substeps")),
    ("Look", ("color_start", "color_end", "emission_strength", "size")),
    ("Sorting", ("blend_mode", "opacity", "sort_order", "sort_passes", "sort_cell_size")),
)
assert {f.name for f in EFFECT_FIELDS} == {name for _, names in SECTIONS for name in names}, "every field has a section"


class GPU_PARTICLES_UL_effects(bpy.types.UIList):
    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        row = layout.row(align=True)
        row.prop(item, "name", text="", emboss=False, icon="PARTICLES")
        row.prop(item, "enabled", text="")


class GPU_PARTICLES_PT_effects(bpy.types.Panel):
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "GPU Particles"
    bl_label = "GPU Particles"

    def draw(self, context):
        layout = self.layout
        obj = context.active_object
        if obj is None:
            layout.label(text="Select an object to emit from", icon="INFO")
        else:
            row = layout.row()
            row.template_list("GPU_PARTICLES_UL_effects", "", obj.gpu_particles, "effects", obj.gpu_particles, "active_index", rows=2)
            column = row.column(align=True)
            column.operator_menu_enum("gpu_particles.add", "preset", text="", icon="ADD")
            column.operator("gpu_particles.remove", text="", icon="REMOVE")
            effect = obj.gpu_particles.active_effect
            if effect is not None:
                layout.use_property_split = True
                for title, names in SECTIONS:
                    header, body = layout.panel(f"gpu_particles_{title.lower()}", default_closed=False)
                    header.label(text=title)
                    if body:
                        for name in names:
                            body.prop(effect, name)
        layout.separator()
        header, body = layout.panel("gpu_particles_render", default_closed=False)
        header.label(text="Render & Bake")
        if body:
            body.use_property_split = True
            body.prop(context.scene.gpu_particles, "emax")
            body.prop(context.scene.render, "filepath", text="Output")
            body.operator("gpu_particles.bake", icon="RENDER_ANIMATION")


CLASSES = (GPU_PARTICLES_UL_effects, GPU_PARTICLES_PT_effects)
