"""View3D sidebar: the active object's effects, one sub-panel per section, bake and stats.

Sub-panels are generated from ``SECTIONS``: a new setting only needs its entry
there (effect fields draw from the active effect, render fields from the scene);
``SECTION_EXTRAS`` adds what is not a field (warnings, colliders, buttons). A
section with neither stays hidden.
"""

from __future__ import annotations

import bpy
import numpy as np

from ..engine.seam.state import LAYOUTS
from ..engine.settings.settings import EFFECT_FIELDS, RENDER_FIELDS, SettingsError, max_particles
from ..engine.simulate.simulation import rate_warning
from ..properties import effect_clamps, effect_settings_of, render_clamps
from ..scene.inputs import colliders, force_fields, has_collision
from ..scene.sdf_colliders import BUILT
from .operators import (
    GPU_PARTICLES_OT_add,
    GPU_PARTICLES_OT_add_color_ramp,
    GPU_PARTICLES_OT_apply_preset,
    GPU_PARTICLES_OT_bake,
    GPU_PARTICLES_OT_export_pointcloud,
    GPU_PARTICLES_OT_remove,
    GPU_PARTICLES_OT_remove_preset,
    GPU_PARTICLES_OT_save_preset,
    preset_entries,
)

SECTIONS = (
    ("Emission", ("count", "emission", "rate", "burst_interval", "emitter_shape", "emitter_radius", "emitter_scale",
                  "lifetime", "lifetime_random", "velocity", "velocity_random", "normal_velocity", "cone_angle",
                  "inherit_velocity", "respawn_skip", "preroll", "seed")),
    ("Forces", ("gravity", "drag", "turbulence_strength", "turbulence_scale", "turbulence_resolution",
                "turbulence_speed", "substeps", "state_layout")),
    ("Collision", ()),
    ("Interactions", ("interaction", "interaction_radius", "friction", "cohesion", "iterations",
                      "fluid_viscosity", "fluid_vorticity", "fluid_tension", "flock_view_angle",
                      "flock_separation", "flock_alignment", "flock_cohesion", "flock_seek", "flock_avoid",
                      "flock_avoid_distance", "flock_max_speed", "flock_max_force")),
    ("Spawn", ("spawn_from", "spawn_on", "spawn_count", "spawn_count_random", "spawn_rate", "spawn_impact_speed",
               "spawn_velocity", "spawn_cone", "spawn_offset", "spawn_inherit_color")),
    ("Look", ("color_start", "color_end", "color_by", "color_speed", "emission_strength", "size", "size_end", "color_random", "size_random",
              "particle_type", "stretch")),
    ("Sprite", ("sprite_image", "flipbook_columns", "flipbook_rows", "flipbook_mode", "flipbook_rate",
                "flipbook_random_start", "flipbook_blend", "flipbook_vectors", "flipbook_vector_strength",
                "sprite_normals", "rotation", "rotation_random", "spin", "spin_random", "rotation_align")),
    ("Trails", ("trail_points", "trail_sampling", "trail_distance", "trail_width", "trail_width_end",
                "trail_color_end", "trail_fade")),
    ("Lighting", ("lighting", "albedo", "albedo_end", "density", "anisotropy", "sprite_relief", "shadow_density",
                  "shadows_on_scene", "shadow_resolution")),
    ("Sorting", ("blend_mode", "opacity", "sort_order", "sort_passes", "sort_cell_size")),
    ("Render & Bake", ("emax_mode", "emax", "emax_headroom", "occlusion", "soft_distance", "point_filter", "viewport_point_filter",
                       "point_mode", "trail_draw", "cache_memory")),
    ("Glints", ("glints", "glint_threshold", "glint_intensity", "glint_length", "glint_rays", "glint_rotation",
                "glint_tint")),
)
assert {f.name for f in EFFECT_FIELDS + RENDER_FIELDS} == {name for _, names in SECTIONS for name in names}, \
    "every field has a section"

_RENDER_NAMES = frozenset(f.name for f in RENDER_FIELDS)


def _owner(context, name):
    """The property group a field lives on: the scene for render fields, else the active effect."""
    if name in _RENDER_NAMES:
        return context.scene.gpu_particles
    obj = context.active_object
    return obj.gpu_particles.active_effect if obj is not None else None


_IMAGE_NAMES = frozenset(f.name for f in EFFECT_FIELDS if f.kind == "string")


def draw_fields(layout, context, names) -> None:
    layout.use_property_split = True
    layout.use_property_decorate = False
    for name in names:
        owner = _owner(context, name)
        if owner is None:
            continue
        if name == "spawn_from":
            draw_spawn_from(layout, owner)
        elif name in _IMAGE_NAMES:  # a Blender image's name (or a file path, shown red, still read)
            layout.prop_search(owner, name, bpy.data, "images")
        else:
            layout.prop(owner, name)


def draw_spawn_from(layout, effect) -> None:
    """The parent by reference (families.py): its object (empty: this one), then one of its effects."""
    layout.prop(effect, "spawn_object", text="Spawn From", placeholder="This Object")
    layout.prop_search(effect, "spawn_effect_name", (effect.spawn_object or effect.id_data).gpu_particles, "effects",
                       text="Effect")


class GPU_PARTICLES_UL_effects(bpy.types.UIList):
    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        row = layout.row(align=True)
        row.prop(item, "name", text="", emboss=False, icon="PARTICLES")
        row.prop(item, "enabled", text="")


class GPU_PARTICLES_MT_presets(bpy.types.Menu):
    """Shipped presets, then the user's own (saved with the + beside the menu)."""

    bl_label = "Effect Presets"

    def draw(self, context):

        layout = self.layout
        shipped, user = preset_entries()
        for name, label in shipped:
            layout.operator(GPU_PARTICLES_OT_apply_preset.bl_idname, text=label).preset = name
        if user:
            layout.separator()
            for name, label in user:
                layout.operator(GPU_PARTICLES_OT_apply_preset.bl_idname, text=label, icon="USER").preset = name


class _SidebarPanel:
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "GPU Particles"


class GPU_PARTICLES_PT_effects(_SidebarPanel, bpy.types.Panel):
    bl_label = "GPU Particles"

    def draw_header_preset(self, context):
        obj = context.active_object
        if obj is None or obj.gpu_particles.active_effect is None:
            return
        row = self.layout.row(align=True)
        row.menu(GPU_PARTICLES_MT_presets.__name__, text="", icon="PRESET")
        row.operator(GPU_PARTICLES_OT_save_preset.bl_idname, text="", icon="ADD")
        row.operator_menu_enum(GPU_PARTICLES_OT_remove_preset.bl_idname, "preset", text="", icon="REMOVE")

    def draw(self, context):
        layout = self.layout
        obj = context.active_object
        if obj is None:
            layout.label(text="Select an object to emit from", icon="INFO")
            return
        row = layout.row()
        row.template_list("GPU_PARTICLES_UL_effects", "", obj.gpu_particles, "effects", obj.gpu_particles,
                          "active_index", rows=2)
        column = row.column(align=True)
        column.operator_menu_enum(GPU_PARTICLES_OT_add.bl_idname, "preset", text="", icon="ADD")
        column.operator(GPU_PARTICLES_OT_remove.bl_idname, text="", icon="REMOVE")
        layout.prop(context.scene.gpu_particles, "show_overlay")
        if obj.gpu_particles.active_effect is not None:
            _draw_clamps(layout, effect_clamps, obj.gpu_particles.active_effect)


def _section_panel(index: int, title: str, names: tuple[str, ...]):
    """A sub-panel class drawing one section's fields."""
    scene_level = bool(names) and all(name in _RENDER_NAMES for name in names)

    @classmethod
    def poll(cls, context):
        if not names and title not in SECTION_EXTRAS:
            return False
        if scene_level:
            return True
        obj = context.active_object
        return obj is not None and obj.gpu_particles.active_effect is not None

    def draw(self, context):
        draw_fields(self.layout, context, names)
        extra = SECTION_EXTRAS.get(title)
        if extra is not None:
            extra(self.layout, context)

    ident = "".join(c if c.isalnum() else "_" for c in title.lower())
    return type(f"GPU_PARTICLES_PT_{ident}", (_SidebarPanel, bpy.types.Panel), {
        "bl_label": title,
        "bl_parent_id": "GPU_PARTICLES_PT_effects",
        "bl_order": index,
        "poll": poll,
        "draw": draw,
    })


def _active_effect(context):
    return context.active_object.gpu_particles.active_effect


def gpu_count_limit() -> int | None:
    """Most particle slots this GPU's textures hold (None where no GPU context is bound)."""
    try:
        import gpu

        return max_particles(gpu.capabilities.max_texture_size_get())
    except (ImportError, RuntimeError, SystemError):
        return None


def count_note(effect, limit: int | None) -> tuple[str, str]:
    """(text, icon) under the count: this GPU's limit and the state memory the count takes."""
    megabytes = effect.count * LAYOUTS[effect.state_layout].bytes_per_particle / 2**20
    if limit is None:
        return f"{megabytes:,.0f} MB of particle state", "INFO"
    if effect.count >= limit:
        return f"At this GPU's limit of {limit:,} particles ({megabytes:,.0f} MB of state)", "ERROR"
    return f"This GPU holds up to {limit:,} particles; this count takes {megabytes:,.0f} MB", "INFO"


def _draw_rate_warning(layout, context):
    effect = _active_effect(context)
    text, icon = count_note(effect, gpu_count_limit())
    layout.label(text=text, icon=icon)
    try:
        warning = rate_warning(effect_settings_of(effect))
    except SettingsError as error:
        warning = str(error)
    if warning:
        layout.label(text=warning, icon="ERROR")


def _draw_clamps(layout, clamps_of, owner) -> None:
    """The settings of ``owner`` past their bounds, as reading them clamps them (and a bake reports them)."""
    try:
        clamps = clamps_of(owner)
    except SettingsError:  # a value no clamp mends: the Emission section says which
        return
    for clamp in clamps:
        layout.label(text=clamp, icon="ERROR")


def _draw_color_ramp(layout, context):
    """The color-over-life ramp when the effect has one, else the button that adds it."""
    effect = _active_effect(context)
    if effect.ramp_texture is None:
        layout.operator(GPU_PARTICLES_OT_add_color_ramp.bl_idname, icon="COLOR")
        return
    layout.prop(effect, "ramp_texture")
    if effect.ramp_texture.use_color_ramp:
        layout.template_color_ramp(effect.ramp_texture, "color_ramp", expand=True)


def _draw_force_fields(layout, context):
    """The scene's force fields act on every effect: say how many, and what is ignored."""
    fields, warnings = force_fields(context.scene)
    layout.label(text=f"Force fields acting: {len(fields)}", icon="FORCE_WIND")
    for warning in warnings:
        layout.label(text=warning, icon="ERROR")


def _draw_colliders(layout, context):
    """Colliders are objects with Blender's Collision physics: list what the particles bounce off."""
    found, _, warnings = colliders(context.scene, depsgraph=context.view_layer.depsgraph)
    if not found and not warnings:
        layout.label(text="Add Collision physics to a mesh", icon="INFO")
    for collider in found:
        layout.label(text=f"{collider.name}: {collider.type.lower()}, bounce {collider.bounce:.2f}, "
                          f"friction {collider.friction:.2f}", icon="MOD_PHYSICS")
    for warning in warnings:
        layout.label(text=warning, icon="ERROR")


def _draw_interactions(layout, context):
    """Particles interact within one effect: say which effects of the scene do."""
    interacting = [f"{obj.name}/{effect.name}: {effect.interaction.title()}" for obj in context.scene.objects
                   if hasattr(obj, "gpu_particles") for effect in obj.gpu_particles.effects
                   if effect.interaction != "NONE"]
    layout.label(text="Particles interact with those of their own effect", icon="INFO")
    for line in interacting or ["No effect interacts"]:
        layout.label(text=line, icon="PARTICLES")
    if _active_effect(context).interaction == "FLOCKING":
        layout.prop(_active_effect(context), "flock_target", text="Target")


def _draw_lighting(layout, context):
    """What lights a lit effect: the lights casting particle shadows (the first four with Shadow on, brightest at
    the emitter first), those lighting it unshadowed, and what is wrong (no light at all, bad powers)."""
    from ..engine.light.surface_shadow import NEEDS_DEPTH
    from ..engine.look.lighting import MAX_SHADOWED_LIGHTS
    from ..scene.snapshot import read_lights

    obj = context.active_object
    effect = _active_effect(context)
    if effect.lighting == "EMISSION":
        layout.label(text="Emission: the particles glow; the scene's lights are not used", icon="INFO")
        return
    lights = read_lights(context.scene, [np.asarray(obj.matrix_world)], [(obj, effect)])
    shadowed = ", ".join(light.name for light in lights.shadowed)
    layout.label(text=f"Particle shadows from: {shadowed}" if shadowed else "No light casts particle shadows",
                 icon="LIGHT_SUN")
    if effect.shadows_on_scene and shadowed:
        layout.label(text=f"Shadows on the scene from: {shadowed}", icon="LIGHT_SUN")
    taken = ", ".join(light.name for light in lights.lights if light.shadow and light.shadow_slot < 0)
    if taken:
        layout.label(text=f"Shadow slots taken ({MAX_SHADOWED_LIGHTS} lights): no particle shadows from {taken}",
                     icon="ERROR")
    if effect.shadows_on_scene and context.scene.gpu_particles.occlusion == "NONE":
        layout.label(text=NEEDS_DEPTH, icon="ERROR")
    unshadowed = ", ".join(light.name for light in lights.lights if light.shadow_slot < 0)
    if unshadowed:
        layout.label(text=f"Lighting without particle shadows: {unshadowed}", icon="LIGHT")
    for warning in lights.warnings:
        layout.label(text=warning, icon="ERROR")


def _draw_render_and_bake(layout, context):
    from ..scene.renderer import lens_summary

    scene = context.scene
    from ..output.render_integration import draw_settings
    from .add_to_scene import draw_point_caches

    _draw_clamps(layout, render_clamps, scene)
    hints = layout.column(align=True)
    for line in lens_summary(scene):  # Blender's own settings drive these: shown, not copied
        hints.label(text=line, icon="INFO")
    layout.prop(scene.render.image_settings, "file_format", text="Format")
    draw_settings(layout, scene)
    column = layout.column(align=True)
    column.operator(GPU_PARTICLES_OT_bake.bl_idname, icon="RENDER_ANIMATION")
    column.operator(GPU_PARTICLES_OT_export_pointcloud.bl_idname, icon="POINTCLOUD_DATA")
    draw_point_caches(column, scene)


SECTION_EXTRAS = {"Emission": _draw_rate_warning, "Forces": _draw_force_fields, "Collision": _draw_colliders,
                  "Interactions": _draw_interactions,
                  "Look": _draw_color_ramp, "Lighting": _draw_lighting, "Render & Bake": _draw_render_and_bake}


class GPU_PARTICLES_PT_stats(_SidebarPanel, bpy.types.Panel):
    """What the viewport overlay measured the last time it drew."""

    bl_label = "Stats"
    bl_parent_id = "GPU_PARTICLES_PT_effects"
    bl_order = len(SECTIONS)
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        from ..viewport import last_stats, preroll_progress, stats_panel_drawn

        stats_panel_drawn()  # only while this panel shows does the overlay wait for the GPU to measure
        layout = self.layout
        progress = preroll_progress()
        if progress is not None:
            layout.label(text=f"Preroll: {progress:.0%} (Bake Simulation keeps it in the cache)", icon="TIME")
        stats = last_stats()
        if stats is None:
            layout.label(text="Shown once the overlay has drawn a frame", icon="INFO")
            return
        column = layout.column(align=True)
        column.label(text=f"Frame {stats.frame}: {stats.alive:,} of {stats.slots:,} particles alive")
        for stage, ms in stats.stage_ms.items():
            column.label(text=f"{stage}: {ms:.2f} ms")
        column.label(text=f"Emax overflows: {stats.overflow:,}", icon="ERROR" if stats.overflow else "NONE")
        if stats.emax is not None:
            column.label(text=f"Automatic Emax: {stats.emax:.4g}")
        if stats.spawn_lost:
            column.label(text=f"Spawned particles lost: {stats.spawn_lost:,} (raise the spawned effect's count)",
                         icon="ERROR")
        if stats.neighbours_cut:
            column.label(text=f"Neighbours left out: {stats.neighbours_cut:,} (lower the Interaction Radius)",
                         icon="ERROR")


class GPU_PARTICLES_PT_collider(_SidebarPanel, bpy.types.Panel):
    """The active collider's SDF: its resolution setting and the grid the simulation last built."""

    bl_label = "GPU Particles Collider"
    bl_options = {"DEFAULT_CLOSED"}

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        return obj is not None and obj.type == "MESH" and has_collision(obj)

    def draw(self, context):
        obj = context.active_object
        layout = self.layout
        layout.prop(obj.gpu_particles_collider, "resolution", text="SDF Resolution (0: Auto)")
        built = BUILT.get(obj.name)
        if built is None:
            layout.label(text="No SDF built yet (planes, spheres and boxes need none)", icon="INFO")
            return
        column = layout.column(align=True)
        column.label(text=f"SDF: {' x '.join(map(str, built.dims))} voxels, {built.nbytes / 2**20:.1f} MiB")
        column.label(text="Last rebuild: " + (f"{built.rebuild_ms:.2f} ms" if built.rebuild_ms is not None
                                              else "not measured (open Stats)"))


SECTION_PANELS = tuple(_section_panel(i, title, names) for i, (title, names) in enumerate(SECTIONS))
CLASSES = (GPU_PARTICLES_UL_effects, GPU_PARTICLES_MT_presets, GPU_PARTICLES_PT_effects, *SECTION_PANELS,
           GPU_PARTICLES_PT_stats, GPU_PARTICLES_PT_collider)
register, unregister = bpy.utils.register_classes_factory(CLASSES)
