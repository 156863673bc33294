"""The Simulation Cache panel and its operators: Bake Simulation, Free (like Blender's cache panels)."""

from __future__ import annotations

from pathlib import Path

import bpy

from ..engine.settings.settings import SettingsError
from ..engine.simulate.cache_format import CacheError
from ..hosts.base import GPUMemoryError, NoGPUError, ShaderCompileError
from ..properties import simulation_range
from ..scene.cache import cache_folder, cached_frames, effect_folder, free, read_manifest
from ..scene.index import edits
from ..scene.job import FrameJob
from ..scene.renderer import SceneRenderer
from ..scene.snapshot import read_snapshot
from .modal_job import ModalJobOperator


class CacheBakeError(RuntimeError):
    """Why the simulation cannot be baked; shown to the user as is."""


def _folder(scene) -> Path:
    folder = cache_folder(scene)
    if folder is None:
        raise CacheBakeError("Save the .blend first: the cache folder is relative to it (or set an absolute folder)")
    return folder


class SimulationBake(FrameJob):
    """Simulate the simulation's range (Simulation Start to End) into the disk cache, a piece (a frame or part
    of the preroll) per step."""

    def __init__(self, scene):
        if not scene.gpu_particles.use_disk_cache:
            raise CacheBakeError("The disk cache is off: enable Disk Cache to bake the simulation")
        self.folder = _folder(scene)
        try:
            self.renderer = SceneRenderer(scene, 1, 1, cache="WRITE")
        except (NoGPUError, GPUMemoryError, ShaderCompileError, SettingsError, ValueError, CacheError) as error:
            raise CacheBakeError(str(error)) from None
        if not self.renderer.effects:
            raise CacheBakeError("No enabled GPU Particles effects in the scene: add one with Add Effect")
        start, end = simulation_range(scene)
        if end < start:
            raise CacheBakeError(f"The simulation range runs backwards: {start} to {end}")
        self.frames = list(range(start, end + 1))
        self.preroll = self.renderer.prepare(start)
        self.done = 0

    def step(self) -> None:
        try:
            if not self.preroll.step():
                self.renderer.advance_to(self.frames[self.done])
                self.done += 1
        except (CacheError, SettingsError) as error:
            raise CacheBakeError(str(error)) from None

    def close(self, cancelled: bool = False) -> None:
        """Nothing to tidy: every checkpoint written is complete (the operator's interface)."""


class GPU_PARTICLES_OT_bake_simulation(ModalJobOperator):
    """Simulate the scene's frame range into the disk cache (preroll included): scrubbing and bakes read it"""

    bl_idname = "gpu_particles.bake_simulation"
    bl_label = "Bake Simulation"
    job_error = CacheBakeError

    def make_job(self, context):
        return SimulationBake(context.scene)

    def _finish(self, cancelled=False):
        job, self._job = self._job, None
        verb = "Cancelled after" if cancelled else "Cached"
        self.report({"WARNING"} if cancelled else {"INFO"}, f"{verb} {job.done} frame(s) in {job.folder}")


class GPU_PARTICLES_OT_free_cache(bpy.types.Operator):
    """Delete the scene's simulation cache from disk"""

    bl_idname = "gpu_particles.free_cache"
    bl_label = "Free"

    def execute(self, context):
        try:
            removed = free(_folder(context.scene))
        except (CacheBakeError, OSError) as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        from .. import viewport

        viewport.free()
        self.report({"INFO"}, f"Freed the simulation cache ({removed} file(s))")
        return {"FINISHED"}


def cache_status(scene) -> str:
    """What the panel says about the cache: the range the current settings can use, or why there is none."""
    folder = cache_folder(scene)
    if folder is None:
        return "Save the .blend to keep a cache next to it"
    try:
        manifest = read_manifest(folder)
    except CacheError as error:
        return str(error)
    frames = cached_frames(folder)
    if not frames:
        return "Not cached"
    cached = f"frames {frames[0]}-{frames[-1]} ({len(frames)} checkpoint(s))"
    if _settings_keys(scene) != _manifest_keys(manifest):
        return f"Stale after an edit: {cached} no longer apply (Bake Simulation again)"
    return f"Cached {cached}"


def _manifest_keys(manifest: dict) -> tuple:
    return manifest.get("start_frame"), tuple((e["folder"], e.get("settings_key")) for e in manifest["effects"])


_kept_keys: dict = {}  # (scene, edits) -> what _settings_keys read then: the panel redraws often


def _settings_keys(scene) -> tuple | None:
    """The simulation start and each effect's (cache folder, settings key) as the scene is set now, as the
    manifest records them; None when the settings are not valid.  What a cache's checkpoints also depend on,
    frame by frame (emitter and collider motion, force fields), is checked when a frame is read."""
    key = (scene.as_pointer(), edits())
    if key not in _kept_keys:
        _kept_keys.clear()
        try:
            snapshot = read_snapshot(scene)
        except SettingsError:
            _kept_keys[key] = None
        else:
            _kept_keys[key] = snapshot.simulation_start, tuple(
                (effect_folder(i, effect), snapshot.effect_key(i).hex()) for i, effect in enumerate(snapshot.effects))
    return _kept_keys[key]


class GPU_PARTICLES_PT_cache(bpy.types.Panel):
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "GPU Particles"
    bl_label = "Simulation Cache"
    bl_parent_id = "GPU_PARTICLES_PT_effects"
    bl_options = {"DEFAULT_CLOSED"}
    bl_order = 90

    def draw_header(self, context):
        self.layout.prop(context.scene.gpu_particles, "use_disk_cache", text="")

    def draw(self, context):
        layout = self.layout
        settings = context.scene.gpu_particles
        layout.use_property_split = True
        layout.use_property_decorate = False
        column = layout.column(align=True)  # the simulation's range holds with the disk cache off too
        column.prop(settings, "simulation_start")
        column.prop(settings, "simulation_end")
        layout = layout.column()
        layout.active = settings.use_disk_cache
        layout.prop(settings, "cache_directory")
        column = layout.column()
        column.prop(settings, "cache_interval")
        column.prop(settings, "cache_every_frame")
        row = layout.row(align=True)
        row.operator(GPU_PARTICLES_OT_bake_simulation.bl_idname, icon="PHYSICS")
        row.operator(GPU_PARTICLES_OT_free_cache.bl_idname, icon="TRASH")
        layout.label(text=cache_status(context.scene), icon="FILE_CACHE")


CLASSES = (GPU_PARTICLES_OT_bake_simulation, GPU_PARTICLES_OT_free_cache, GPU_PARTICLES_PT_cache)
register, unregister = bpy.utils.register_classes_factory(CLASSES)
