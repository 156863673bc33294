"""Operators: add/remove effects, apply presets, bake (modal with progress and ESC)."""

from __future__ import annotations

import bpy
from bpy.props import EnumProperty

from .bake import BakeError, BakeJob
from .engine.presets import PresetError, load_preset, preset_names
from .properties import assign


def _preset_items(self, context):
    return [(name, name.replace("_", " ").title(), "") for name in preset_names()]


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
            preset = load_preset(self.preset) if self.preset else None
        except PresetError as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        effects = obj.gpu_particles.effects
        effect = effects.add()
        effect.name = preset.label if preset else "Effect"
        if preset:
            assign(effect, preset.effect)
            assign(context.scene.gpu_particles, preset.render)
        obj.gpu_particles.active_index = len(effects) - 1
        return {"FINISHED"}


class GPU_PARTICLES_OT_remove(bpy.types.Operator):
    """Remove the active GPU particle effect of the active object"""

    bl_idname = "gpu_particles.remove"
    bl_label = "Remove Effect"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        return obj is not None and obj.gpu_particles.active_effect is not None

    def execute(self, context):
        settings = context.active_object.gpu_particles
        settings.effects.remove(settings.active_index)
        settings.active_index = max(0, min(settings.active_index, len(settings.effects) - 1))
        return {"FINISHED"}


class GPU_PARTICLES_OT_add_color_ramp(bpy.types.Operator):
    """Give the active effect a color ramp over life, starting from its start and end colors"""

    bl_idname = "gpu_particles.add_color_ramp"
    bl_label = "Add Color Ramp"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        return obj is not None and obj.gpu_particles.active_effect is not None

    def execute(self, context):
        effect = context.active_object.gpu_particles.active_effect
        texture = bpy.data.textures.new(f"{effect.name} Colors", "BLEND")
        texture.use_color_ramp = True
        elements = texture.color_ramp.elements
        elements[0].color = (*effect.color_start, 1.0)
        elements[1].color = (*effect.color_end, 1.0)
        effect.ramp_texture = texture
        return {"FINISHED"}


class GPU_PARTICLES_OT_bake(bpy.types.Operator):
    """Render every GPU particle effect of the scene to the output image sequence"""

    bl_idname = "gpu_particles.bake"
    bl_label = "Bake Particles"

    _job = None
    _timer = None

    def _start(self, context) -> bool:
        try:
            self._job = BakeJob(context.scene)
        except BakeError as error:
            self.report({"ERROR"}, str(error))
            return False
        for warning in self._job.renderer.warnings:
            self.report({"WARNING"}, warning)
        return True

    def _finish(self, cancelled=False):
        job, self._job = self._job, None
        job.close(cancelled=cancelled)
        verb = "Cancelled after" if cancelled else "Baked"
        self.report({"WARNING"} if cancelled else {"INFO"}, f"{verb} {job.done} frame(s) to {job.plan.output_dir}")
        if job.overflow:
            self.report({"WARNING"}, f"{sum(job.overflow.values()):,} particle adds overflowed in {len(job.overflow)} "
                                     f"frame(s): raise Emax or use Auto Emax")

    def execute(self, context):
        """Blocking bake (headless and scripts)."""
        if not self._start(context):
            return {"CANCELLED"}
        try:
            while not self._job.finished:
                self._job.step()
        except BakeError as error:
            self._job.close(cancelled=True)
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        self._finish()
        return {"FINISHED"}

    def invoke(self, context, event):
        """Interactive bake: one frame per timer tick, progress bar, ESC cancels."""
        if not self._start(context):
            return {"CANCELLED"}
        wm = context.window_manager
        wm.progress_begin(0, len(self._job.frames))
        self._timer = wm.event_timer_add(0.001, window=context.window)
        wm.modal_handler_add(self)
        return {"RUNNING_MODAL"}

    def modal(self, context, event):
        if event.type == "ESC":
            return self._end_modal(context, cancelled=True)
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        try:
            self._job.step()
        except BakeError as error:
            self.report({"ERROR"}, str(error))
            return self._end_modal(context, cancelled=True)
        context.window_manager.progress_update(self._job.done)
        return self._end_modal(context) if self._job.finished else {"RUNNING_MODAL"}

    def _end_modal(self, context, cancelled=False):
        wm = context.window_manager
        wm.event_timer_remove(self._timer)
        wm.progress_end()
        self._finish(cancelled)
        return {"CANCELLED"} if cancelled else {"FINISHED"}


CLASSES = (GPU_PARTICLES_OT_add, GPU_PARTICLES_OT_remove, GPU_PARTICLES_OT_add_color_ramp, GPU_PARTICLES_OT_bake)
