"""View3D sidebar panel: effects of the active object and the scene bake."""

from __future__ import annotations

import bpy

from .engine.settings import EFFECT_FIELDS, SettingsError
from .engine.simulation import rate_warning
from .properties import effect_settings_of
from .scene_inputs import scene_input_warnings

SECTIONS = (
    ("Emission", ("count", "emission", "rate", "burst_interval", "emitter_shape", "emitter_radius", "lifetime",
                  "lifetime_random", "velocity", "velocity_random", "normal_velocity", "cone_angle", "inherit_velocity",
                  "respawn_skip", "preroll", "seed")),
    ("Forces", ("gravity", "drag", "turbulence_strength", "turbulence_scale", "turbulence_resolution",
                "turbulence_speed", "substeps", "state_layout")),
    ("Look", ("color_start", "color_end", "emission_strength", "size", "size_end", "color_random", "size_random",
              "particle_type", "stretch")),
    ("Sorting", ("blend_mode", "opacity", "sort_order", "sort_passes", "sort_cell_size")),
)
assert {f.name for f in EFFECT_FIELDS} == {name for _, names in SECTIONS for name in names}, "every field has a section"


def _draw_rate_warning(layout, effect):
    try:
        warning = rate_warning(effect_settings_of(effect))
    except SettingsError as error:
        warning = str(error)
    if warning:
        layout.label(text=warning, icon="ERROR")


def _draw_color_ramp(layout, effect):
    """The color-over-life ramp when the effect has one, else the button that adds it."""
    if effect.ramp_texture is None:
        layout.operator("gpu_particles.add_color_ramp", icon="COLOR")
        return
    layout.prop(effect, "ramp_texture")
    if effect.ramp_texture.use_color_ramp:
        layout.template_color_ramp(effect.ramp_texture, "color_ramp", expand=True)


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
                        if title == "Look":
                            _draw_color_ramp(body, effect)
                        if title == "Emission":
                            _draw_rate_warning(body, effect)
        layout.separator()
        header, body = layout.panel("gpu_particles_render", default_closed=False)
        header.label(text="Render & Bake")
        if body:
            body.use_property_split = True
            for name in ("emax_mode", "emax", "emax_headroom", "occlusion", "point_mode", "cache_memory"):
                body.prop(context.scene.gpu_particles, name)
            for warning in scene_input_warnings(context.scene):
                body.label(text=warning, icon="ERROR")
            body.prop(context.scene.render, "filepath", text="Output")
            body.operator("gpu_particles.bake", icon="RENDER_ANIMATION")


CLASSES = (GPU_PARTICLES_UL_effects, GPU_PARTICLES_PT_effects)
