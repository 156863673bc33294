"""Operators: add/remove effects, presets (apply, save, remove), bake (modal with progress and ESC), export."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import bpy
from bpy.props import BoolProperty, EnumProperty, IntProperty, StringProperty

from ..engine.settings.presets import (
    PresetError,
    load_preset,
    parse_preset,
    preset_dir,
    preset_file_name,
    preset_names,
    spawned_owner,
    write_preset,
)
from ..hosts.base import GPUMemoryError, NoGPUError
from ..output.bake import BakeError, BakeJob
from ..output.export import export_frame, export_range
from ..properties import (
    assign,
    effect_settings_of,
    fix_simulation_range,
    named_clamps,
    render_settings_of,
    scene_clamps,
    scene_effects,
)
from ..scene.csg import add_stage_primitives, scene_primitives
from ..scene.families import descendants, link, parent_of
from ..scene.stage_colliders import add_stage_colliders, scene_has_colliders
from ..scene.stage_fields import add_stage_fields, scene_has_fields
from ..scene.stage_lights import add_stage_light_setup
from ..scene.stage_rocks import add_stage_rocks, stage_rocks
from .modal_job import ModalJobOperator


def user_preset_dir() -> Path:
    """Where saved presets go, like Blender's own preset menus (scripts/presets/<add-on>)."""
    return Path(bpy.utils.user_resource("SCRIPTS", path="presets/gpu_particles", create=True))


def _label_of(path: Path) -> str:
    try:
        label = json.loads(path.read_text()).get("label")
    except (OSError, ValueError, AttributeError):
        label = None
    return label if isinstance(label, str) and label else path.stem.replace("_", " ").title()


def preset_entries() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(name, label) of the shipped presets (``default`` first) and of the user's saved ones."""
    names = sorted(preset_names(), key=lambda name: name != "default")  # the default first: add()'s default
    shipped = [(name, _label_of(preset_dir() / f"{name}.json")) for name in names]
    folder = user_preset_dir()
    user = [(name, _label_of(folder / f"{name}.json")) for name in preset_names(folder)]
    return shipped, user


def load_any_preset(name: str):
    """A shipped preset, else a user preset of that name (PresetError says why not)."""
    return load_preset(name, extra=(user_preset_dir(),))


_ITEMS_KEEP_ALIVE = {}  # Blender keeps only pointers to dynamic enum strings: hold them here


def _preset_items(self, context):
    shipped, user = preset_entries()
    _ITEMS_KEEP_ALIVE["all"] = [(name, label, "") for name, label in shipped + user]
    return _ITEMS_KEEP_ALIVE["all"]


def _user_preset_items(self, context):
    _ITEMS_KEEP_ALIVE["user"] = [(name, label, "") for name, label in preset_entries()[1]]
    return _ITEMS_KEEP_ALIVE["user"]


def _active_effect(context):
    obj = context.active_object
    return obj.gpu_particles.active_effect if obj is not None else None


class GPU_PARTICLES_OT_add(bpy.types.Operator):
    """Add a GPU particle effect emitted from the active object"""

    bl_idname = "gpu_particles.add"
    bl_label = "Add Effect"
    bl_options = {"REGISTER", "UNDO"}

    preset: EnumProperty(name="Preset", items=_preset_items, description="Preset the new effect starts from")

    def execute(self, context):
        obj = context.active_object
        if obj is None:
            self.report({"ERROR"}, "No active object: select the object to emit from")
            return {"CANCELLED"}
        try:
            preset = load_any_preset(self.preset) if self.preset else None
        except PresetError as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        effects = obj.gpu_particles.effects
        name = preset.label if preset else "Effect"
        name = unique_name(obj, name) if preset and preset.spawned else name  # a family: parents named once
        effect = effects.add()
        fix_simulation_range(context.scene)  # the scene's range now: rendering part of it later keeps its start
        effect.name = name
        if preset:
            _apply_preset_values(effect, preset.effect, preset, "effect")
            _apply_preset_values(context.scene.gpu_particles, preset.render, preset, "render")
        obj.gpu_particles.active_index = len(effects) - 1
        if preset:
            root = obj.gpu_particles.active_index
            added = _add_spawned(obj, root, preset)  # after it: the preset's own effect stays the active one
            self._add_stage(context, obj, preset.stage)
            _report_clamps(self, context.scene, [(obj, e) for e in (effects[root], *added)])
        return {"FINISHED"}

    def _add_stage(self, context, obj, stage: dict) -> None:
        """What the preset's look needs besides the effect, where the scene has none yet: its CSG
        primitives, force fields, colliders, rocks to instance, lights and shadowing objects, placed around ``obj`` as they sit around
        the stage's emitter."""
        shift = _shift_to(stage, obj.matrix_world.translation)
        primitives = "csg" in stage and not scene_primitives(context.scene)
        fields = bool(stage.get("fields")) and not scene_has_fields(context.scene)
        colliders = bool(stage.get("colliders")) and not scene_has_colliders(context.scene)
        rocks = bool(stage.get("rocks")) and stage_rocks(context.scene) is None
        if primitives:
            csg = dict(stage["csg"])
            csg["primitives"] = [_shifted(p, shift) for p in csg.get("primitives", [])]
            add_stage_primitives(context.scene, csg)
        extras = ((fields, "fields", add_stage_fields, "force field"),
                  (colliders, "colliders", add_stage_colliders, "collider"),
                  (rocks, "rocks", add_stage_rocks, "rock mesh"))
        for wanted, key, add, noun in extras:
            if wanted:
                added = add(stage[key], shift)
                self.report({"INFO"}, f"Added {len(added)} {noun}(s) the preset's look needs")
        if fields or colliders or rocks:
            for selected in context.selected_objects:  # the emitter stays the one selected, as before
                selected.select_set(selected == obj)
            obj.select_set(True)
        lit = add_stage_light_setup(stage, shift, context.scene)
        if lit:
            self.report({"INFO"}, f"Added {len(lit)} light(s) and shadowing object(s) the preset's look needs")
        if primitives or fields or colliders or rocks or lit:
            context.view_layer.objects.active = obj


def _add_spawned(obj, root: int, preset) -> list:
    """A family preset's other effects (sub-emitters), on ``obj`` after its others, the preset's own effect at
    place ``root``; each refers to its parent among them (scene/families.py), so a second copy of the preset
    spawns from its own parent.  A child of the same name the parent already has takes the preset's settings
    instead (a preset applied again does not double the family).  The effects set."""
    effects = obj.gpu_particles.effects
    places = {preset.label: root}  # places, not items: an add() moves the collection's items
    for label, settings in preset.spawned:
        parent = effects[places[settings.spawn_from]]
        place = _child_place(obj, parent, label)
        if place is None:
            effects.add().name = unique_name(obj, label)
            place = len(effects) - 1
        _apply_preset_values(effects[place], settings, preset, spawned_owner(label))
        link(effects[place], obj, effects[places[settings.spawn_from]])
        places[label] = place
    return [effects[place] for label, place in places.items() if label != preset.label]


def _child_place(obj, parent, label: str) -> int | None:
    """Where on ``obj`` an effect called ``label`` (or ``label.001``, ...) spawned from ``parent`` is, or None."""
    for place, effect in enumerate(obj.gpu_particles.effects):
        found = parent_of(effect)
        if found is not None and found[1] == parent and re.fullmatch(re.escape(label) + r"(\.\d{3})?", effect.name):
            return place
    return None


def unique_name(obj, label: str) -> str:
    """``label``, or ``label.001``, ... where ``obj`` has an effect of that name (as Blender names copies): each
    effect of a family added twice keeps a name of its own ('Object/Effect' names one parent for the engine)."""
    names = {effect.name for effect in obj.gpu_particles.effects}
    return next(name for name in (label, *(f"{label}.{i:03d}" for i in range(1, len(names) + 2)))
                if name not in names)


def _apply_preset_values(group, settings, preset, owner: str) -> None:
    """A preset's ``settings`` onto a property group, then the numbers the file gives past their bounds for
    ``owner`` as given (``Preset.beyond``): the group keeps them, and reading it clamps them and says so."""
    assign(group, settings)
    for where, name, value in preset.beyond:
        if where == owner:
            setattr(group, name, value)


def _report_clamps(operator, scene, effects) -> None:
    """A warning per setting of ``effects`` ((object, effect) pairs) and the scene's render settings that reading
    clamps, as the panel and a bake name them."""
    for clamp in [*scene_clamps(scene), *(message for obj, effect in effects for message in named_clamps(obj, effect))]:
        operator.report({"WARNING"}, clamp)


def _shift_to(stage: dict, location) -> list[float]:
    """From the stage's own emitter to ``location`` (the command line's scene puts the emitter there: no shift)."""
    origin = stage.get("emitter", {}).get("location", (0.0, 0.0, 0.0))
    return [location[i] - origin[i] for i in range(3)]


def _shifted(item: dict, shift) -> dict:
    return {**item, "location": [item.get("location", (0.0, 0.0, 0.0))[i] + shift[i] for i in range(3)]}


class ActiveEffectOperator(bpy.types.Operator):
    """Base of operators that act on the active object's active effect."""

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        return obj is not None and obj.gpu_particles.active_effect is not None


class GPU_PARTICLES_OT_remove(ActiveEffectOperator):
    """Remove the active GPU particle effect of the active object"""

    bl_idname = "gpu_particles.remove"
    bl_label = "Remove Effect"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        settings = context.active_object.gpu_particles
        settings.effects.remove(settings.active_index)
        settings.active_index = max(0, min(settings.active_index, len(settings.effects) - 1))
        return {"FINISHED"}


class GPU_PARTICLES_OT_apply_preset(bpy.types.Operator):
    """Apply a preset to the active effect (its render settings to the scene, a family's other effects beside it)"""

    bl_idname = "gpu_particles.apply_preset"
    bl_label = "Apply Preset"
    bl_options = {"REGISTER", "UNDO"}

    preset: StringProperty(name="Preset", description="Name of a shipped or saved preset")
    filepath: StringProperty(name="File", subtype="FILE_PATH", options={"SKIP_SAVE"},
                             description="A preset file to apply instead of a named preset")

    @classmethod
    def poll(cls, context):
        return _active_effect(context) is not None

    def execute(self, context):
        try:
            preset = parse_preset(Path(bpy.path.abspath(self.filepath))) if self.filepath else load_any_preset(self.preset)
        except PresetError as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        _apply_preset_values(_active_effect(context), preset.effect, preset, "effect")
        _apply_preset_values(context.scene.gpu_particles, preset.render, preset, "render")
        obj = context.active_object
        root = obj.gpu_particles.active_index
        added = _add_spawned(obj, root, preset)
        self.report({"INFO"}, f"Applied preset '{preset.label}'" +
                    (f", with {len(added)} effect(s) spawned from it" if added else ""))
        _report_clamps(self, context.scene, [(obj, e) for e in (obj.gpu_particles.effects[root], *added)])
        return {"FINISHED"}


class GPU_PARTICLES_OT_save_preset(bpy.types.Operator):
    """Save the active effect's settings, and the effects spawned from it, as a preset of your own"""

    bl_idname = "gpu_particles.save_preset"
    bl_label = "Save Preset"

    name: StringProperty(name="Name", description="Name of the new preset")
    description: StringProperty(name="Description")
    overwrite: BoolProperty(name="Overwrite", description="Replace a saved preset of the same name", options={"SKIP_SAVE"})

    @classmethod
    def poll(cls, context):
        return _active_effect(context) is not None

    def invoke(self, context, event):
        self.name = _active_effect(context).name
        return context.window_manager.invoke_props_dialog(self)

    def execute(self, context):
        try:
            stem = preset_file_name(self.name)
        except PresetError as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        if stem in preset_names():
            self.report({"ERROR"}, f"'{stem}' is a shipped preset; pick another name")
            return {"CANCELLED"}
        path = user_preset_dir() / f"{stem}.json"
        if path.exists() and not self.overwrite:
            self.report({"ERROR"}, f"A preset named '{stem}' exists; enable Overwrite to replace it")
            return {"CANCELLED"}
        try:
            effect, spawned = _family_settings(context.active_object, _active_effect(context), self.name.strip())
            write_preset(path, self.name.strip(), effect, render_settings_of(context.scene), self.description,
                         spawned)
        except (OSError, ValueError) as error:
            self.report({"ERROR"}, f"Could not save preset '{stem}': {error}")
            return {"CANCELLED"}
        self.report({"INFO"}, f"Saved preset '{self.name.strip()}' to {path}")
        return {"FINISHED"}


def _family_settings(obj, effect, label: str):
    """The settings of ``effect`` (emitted: the preset's own) and (label, settings) of every effect spawned from
    it, children's children after them, each ``spawn_from`` naming its parent's label in the preset."""
    labels = {effect.as_pointer(): label}
    spawned = []
    for _, child, parent in descendants(obj, effect):
        name = next(name for name in (child.name, *(f"{child.name} {i}" for i in range(2, len(labels) + 2)))
                    if name not in labels.values())
        labels[child.as_pointer()] = name
        spawned.append((name, replace(effect_settings_of(child), spawn_from=labels[parent.as_pointer()])))
    return replace(effect_settings_of(effect), spawn_from=""), tuple(spawned)


class GPU_PARTICLES_OT_remove_preset(bpy.types.Operator):
    """Delete one of your saved presets (shipped presets stay)"""

    bl_idname = "gpu_particles.remove_preset"
    bl_label = "Remove Preset"

    preset: EnumProperty(name="Preset", items=_user_preset_items)

    def execute(self, context):
        if not self.preset:
            self.report({"ERROR"}, "No saved presets to remove")
            return {"CANCELLED"}
        (user_preset_dir() / f"{self.preset}.json").unlink(missing_ok=True)
        return {"FINISHED"}


class GPU_PARTICLES_OT_add_color_ramp(ActiveEffectOperator):
    """Give the active effect a color ramp over life, starting from its start and end colors"""

    bl_idname = "gpu_particles.add_color_ramp"
    bl_label = "Add Color Ramp"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        effect = context.active_object.gpu_particles.active_effect
        texture = bpy.data.textures.new(f"{effect.name} Colors", "BLEND")
        texture.use_color_ramp = True
        elements = texture.color_ramp.elements
        elements[0].color = (*effect.color_start, 1.0)
        elements[1].color = (*effect.color_end, 1.0)
        effect.ramp_texture = texture
        return {"FINISHED"}


class GPU_PARTICLES_OT_bake(ModalJobOperator):
    """Render every GPU particle effect of the scene to the output image sequence"""

    bl_idname = "gpu_particles.bake"
    bl_label = "Bake Particles"
    job_error = BakeError

    frame_start: IntProperty(name="Start", options={"SKIP_SAVE"},
                             description="First frame to render (default: the scene's); the simulation starts from "
                                         "the latest disk-cache checkpoint at or before it")
    frame_end: IntProperty(name="End", options={"SKIP_SAVE"}, description="Last frame to render (default: the scene's)")

    def make_job(self, context):
        props, scene = self.properties, context.scene
        return BakeJob(scene, (self.frame_start if props.is_property_set("frame_start") else scene.frame_start,
                               self.frame_end if props.is_property_set("frame_end") else scene.frame_end))

    _reported = 0  # the job's warnings reported so far

    def started(self):
        self._report_warnings(self._job)

    def _report_warnings(self, job):
        """The bake's warnings not reported yet: those known before the first frame at once, the rest at the end,
        each once (BakeJob.warnings, also in the sidecar)."""
        for warning in job.warnings[self._reported:]:
            self.report({"WARNING"}, warning)
        self._reported = len(job.warnings)

    def _finish(self, cancelled=False):
        job, self._job = self._job, None
        job.close(cancelled=cancelled)
        verb = "Cancelled after" if cancelled else "Baked"
        self.report({"WARNING"} if cancelled else {"INFO"}, f"{verb} {job.done} frame(s) to {job.plan.output_dir}")
        self._report_warnings(job)


class GPU_PARTICLES_OT_export_pointcloud(bpy.types.Operator):
    """Export the scene's particles to a PointCloud object that Cycles and EEVEE render"""

    bl_idname = "gpu_particles.export_pointcloud"
    bl_label = "Export Particles as Point Cloud"
    bl_options = {"REGISTER", "UNDO"}

    frame_range: BoolProperty(name="Whole Frame Range", description=(
        "One point cloud per frame of the scene range, each shown only on its frame (a point cache)"))

    def execute(self, context):
        scene = context.scene
        if not scene_effects(scene):
            self.report({"ERROR"}, "No enabled GPU Particles effects in the scene: add one with Add Effect")
            return {"CANCELLED"}
        try:
            objects = export_range(scene) if self.frame_range else [export_frame(scene)]
        except (NoGPUError, GPUMemoryError, ValueError) as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        points = sum(len(obj.data.points) for obj in objects)
        self.report({"INFO"}, f"Exported {points:,} points to {len(objects)} point cloud object(s)")
        return {"FINISHED"}


CLASSES = (GPU_PARTICLES_OT_add, GPU_PARTICLES_OT_remove, GPU_PARTICLES_OT_apply_preset, GPU_PARTICLES_OT_save_preset,
           GPU_PARTICLES_OT_remove_preset, GPU_PARTICLES_OT_add_color_ramp, GPU_PARTICLES_OT_bake,
           GPU_PARTICLES_OT_export_pointcloud)
register, unregister = bpy.utils.register_classes_factory(CLASSES)
