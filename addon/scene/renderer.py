"""Scene to frames: the engine driven by a Blender scene's objects and camera.

Simulation follows the scene frame through a timeline (``scene/time.py``):
stepping forward one frame advances every effect by one frame; going back (or
far ahead) restores the nearest checkpoint, in memory or in the disk cache,
and re-simulates deterministically from there.  Force fields and colliders
are read from the scene every frame (``scene/snapshot.py``).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..engine.draw.compositing import Camera, Compositor
from ..engine.draw.depth import SceneDepth
from ..engine.draw.footprint import Focus, Shutter
from ..engine.draw.frame_resources import FrameResources
from ..engine.draw.glints import GlintStage, wanted
from ..engine.draw.sprites import SpriteLayer
from ..engine.light.shadow_volume import ShadowVolume
from ..engine.light.surface_shadow import NEEDS_DEPTH, SurfaceShadow, casts_on_scene
from ..engine.look.lighting import is_lit
from ..engine.look.sprite_sheets import check_images
from ..engine.pipeline import FrameData, Targets, record_frame
from ..engine.settings.settings import SettingsError, check_for_gpu
from ..engine.simulate.cache_format import CacheError
from ..engine.simulate.turbulence import check_resolution
from ..hosts.blender import BlenderHost
from ..properties import has_effects, scene_effects
from .cache import SimCache, cache_folder
from .csg import is_primitive, scene_cloud
from .depth_prepass import DepthPrepass
from .edits import Edit, edit_between, render_edit
from .inputs import ramp_colors
from .light_shadows import LightShadowMaps, scene_occluders
from .lights import is_light
from .snapshot import (
    EffectsWatch,
    FrameInputs,
    SceneSnapshot,
    read_drawing,
    read_frame,
    read_snapshot,
    scene_depsgraph,
    scene_seconds_per_frame,
)
from .time import SceneSimulation
from .visibility import layer_depsgraph, render_view_layer, render_visibility


def check_camera(camera) -> None:
    """A clear error for a camera the splat cannot project through."""
    if camera is None:
        raise SettingsError("The scene has no camera: add one and make it the scene camera")
    if camera.type != "CAMERA":
        raise SettingsError(f"The scene camera '{camera.name}' is a {camera.type.lower()}, not a camera")
    data = camera.data
    if data.type == "ORTHO" and not data.ortho_scale > 0:
        raise SettingsError(f"Camera '{camera.name}' has an orthographic scale of {data.ortho_scale}: it must be positive")
    if not (data.sensor_width > 0 and data.sensor_height > 0 and data.lens > 0):
        raise SettingsError(f"Camera '{camera.name}' has a zero-size sensor or lens: "
                            f"sensor {data.sensor_width}x{data.sensor_height} mm, lens {data.lens} mm")
    if not abs(camera.matrix_world.determinant()) > 1e-12:
        raise SettingsError(f"Camera '{camera.name}' is scaled to zero: its view cannot be inverted")


def check_effects(effects, host) -> None:
    """What a draw of the snapshot's ``effects`` would refuse (beyond the GPU's limits, a missing or unfit
    sprite image), up front, naming the effect."""
    for effect in effects:
        try:
            check_for_gpu(effect.settings, host.max_texture_size)
            check_resolution(effect.settings.turbulence_resolution, host.max_texture_3d_size)
            check_images(effect.settings, host)
        except SettingsError as error:
            raise SettingsError(f"Effect '{effect.effect_name}' on '{effect.object_name}': {error}") from None


def camera_of(scene, width: int, height: int, camera_matrix_at=None) -> Camera:
    """The scene camera's world-to-clip matrix for a width x height target, with the
    scene's motion blur and the camera's depth of field (``camera_matrix_at``: see ``with_lens``)."""
    camera = scene.camera
    check_camera(camera)
    projection = np.array(camera.calc_matrix_camera(
        scene_depsgraph(scene), x=width, y=height, scale_x=scene.render.pixel_aspect_x, scale_y=scene.render.pixel_aspect_y
    ))
    view = camera.matrix_world.inverted()
    view_proj = projection @ np.array(view)
    if not all(math.isfinite(v) for v in view_proj.ravel()):
        raise SettingsError(f"Camera '{camera.name}' gives a non-finite projection for {width}x{height}")
    return with_lens(scene, Camera(view_proj, width, height), projection,
                     camera_matrix_at or (lambda frames: np.array(camera.matrix_world)))


def shutter_frames(scene) -> tuple[float, float] | None:
    """Frames from the current one to shutter open and close (Blender's shutter and its position), or None."""
    render = scene.render
    if not render.use_motion_blur:
        return None
    length = render.motion_blur_shutter
    start = {"START": 0.0, "CENTER": -0.5, "END": -1.0}[render.motion_blur_position] * length
    return start, start + length


def focus_distance(camera) -> float:
    """Blender's focus distance: the focus object's depth along the camera's view axis, else the set distance."""
    dof = camera.data.dof
    if dof.focus_object is None:
        return dof.focus_distance
    view_axis = np.array(camera.matrix_world)[:3, 2]
    offset = np.array(camera.matrix_world)[:3, 3] - np.array(dof.focus_object.matrix_world)[:3, 3]
    return max(abs(float(view_axis @ offset)) / float(np.linalg.norm(view_axis)), 1e-5)


def with_lens(scene, camera: Camera, projection, camera_matrix_at) -> Camera:
    """``camera`` with the scene's motion blur (``scene.render``) and the scene camera's depth of field.

    ``projection``: the scene camera's projection as this view draws it, or None
    for a view that is not the scene camera's (the viewport's free views: blur
    of particle motion only, no depth of field).  ``camera_matrix_at(frames)``:
    the scene camera's world matrix that many frames from the current one.
    """
    shutter, focus = None, None
    frames = shutter_frames(scene)
    if frames is not None:
        seconds = scene_seconds_per_frame(scene)
        if projection is None:
            shutter = Shutter.still(camera.view_proj, frames[0] * seconds, frames[1] * seconds)
        else:
            open_vp, close_vp = (projection @ np.linalg.inv(camera_matrix_at(f)) for f in frames)
            shutter = Shutter(frames[0] * seconds, frames[1] * seconds, open_vp, close_vp)
    lens = scene.camera.data if projection is not None else None
    if lens is not None and lens.dof.use_dof and lens.type == "PERSP":
        px_per_mm = projection[0, 0] * camera.width / (2.0 * lens.lens)
        focus = Focus.thin_lens(lens.lens, lens.dof.aperture_fstop, focus_distance(scene.camera), px_per_mm,
                                scene.unit_settings.scale_length or 1.0)
    return dataclasses.replace(camera, shutter=shutter, focus=focus)


def lens_summary(scene) -> list[str]:
    """What Blender's motion blur and depth of field settings make the particles do (the panel's hint)."""
    lines = []
    frames = shutter_frames(scene)
    lines.append(f"Motion blur: shutter {frames[1] - frames[0]:.2f} frames ({scene.render.motion_blur_position.title()})"
                 if frames is not None else "Motion blur: off (Render Properties)")
    camera = scene.camera
    if camera is None or camera.type != "CAMERA" or not camera.data.dof.use_dof:
        lines.append("Depth of field: off (Camera Properties)")
    elif camera.data.type != "PERSP":
        lines.append("Depth of field: perspective cameras only")
    else:
        lines.append(f"Depth of field: f/{camera.data.dof.aperture_fstop:.3g} at {focus_distance(camera):.3g} m")
    return lines


class SceneRenderer:
    """Every enabled effect of a scene on the GPU, composited from the scene camera.

    Three parts: the scene read once into a :class:`~.snapshot.SceneSnapshot` (and per frame
    into a :class:`~.snapshot.FrameInputs` for the simulation and a
    :class:`~..engine.pipeline.FrameData` for drawing), time stepped by a
    :class:`~.time.SceneSimulation` (timeline, checkpoints, the disk cache), and frames
    recorded by :func:`~..engine.pipeline.record_frame`: this class only gathers what they take.
    ``cache``: "READ" uses the scene's disk cache when it has one, "WRITE" also fills
    it (bakes), "OFF" ignores it.
    """

    def __init__(self, scene, width: int, height: int, host=None, exact_sort: bool = False, cache: str = "READ",
                 snapshot: SceneSnapshot | None = None, shadows_on_scene: bool = False):
        """``snapshot``: the scene's inputs when the caller has read them (a bake's plan); ``shadows_on_scene``:
        also draw the particles' shadows on the scene's surfaces (``surface_shadow``: renders, the viewport)."""
        self.shadows_on_scene = shadows_on_scene
        self.surface_shadow: SurfaceShadow | None = None  # made when an effect first casts on the scene
        self.scene = scene
        self.exact_sort = exact_sort  # bakes sort exactly every frame; the viewport sorts incrementally
        self.cache_mode = cache
        self.sprites = None  # made when an effect first draws in Alpha mode
        self.host = host or BlenderHost()
        self.width, self.height = width, height
        self.resources = FrameResources(self.host, width, height)  # the frame's targets, looks and sheets
        snapshot = snapshot or read_snapshot(scene)
        self._use_render(snapshot.render)
        self.cloud = self._cloud(snapshot)
        self.cloud_warnings = []
        self.shadows = None  # the lit effects' shadow volume, made when an effect is first lit
        self.light_shadow_maps = None  # the scene's occluders seen from the shadowed lights, made on first use
        self.light_warnings: tuple[str, ...] = ()  # what was wrong with the lights of the last drawn frame
        self.cache_warnings: list[str] = []
        self.lost: list[str] = []  # emitters deleted while rendering
        self.effects = []
        self.drawn = []  # the systems the last composite_view drew: those whose emitter the view sees
        self.watch = EffectsWatch()
        self.frame_stats = None  # FrameStats of the last rendered frame (overflows, peak)
        self._build(snapshot)

    def _use_render(self, render) -> None:
        """The compositor, glints and occluders' pre-pass for the render settings ``render``."""
        self.compositor = Compositor(self.resources, render)
        self.compositor.antialias = render.point_filter == "ANTIALIASED"
        self.glints = GlintStage(self.host, self.width, self.height, render) if wanted(render) else None
        if render.occlusion == "SCENE":
            self.prepass = self._depth_prepass()
            self.resources.use_depth(SceneDepth(self.host, self.width, self.height))
        else:
            self.prepass = None
            self.resources.use_depth(None)

    def _use_glints(self, render) -> None:
        """The glint stage for ``render`` whose other settings are the compositor's (an edit of glints alone)."""
        if not wanted(render):
            self.glints = None
        elif self.glints is None:
            self.glints = GlintStage(self.host, self.width, self.height, render)
        else:
            self.glints.render = render

    def _cloud(self, snapshot: SceneSnapshot):
        """The CSG point cloud of ``snapshot``'s cloud settings, None without primitives."""
        return scene_cloud(self.scene, self.host) if snapshot.cloud is not None else None

    def _depth_prepass(self) -> DepthPrepass:
        """The pre-pass of the scene's occluders: a bake reads their meshes each frame."""
        return DepthPrepass()

    def _objects(self, test):
        """The scene's objects that may pass ``test`` (scene/index.py), in the scene's order: a bake asks
        them all each frame."""
        return self.scene.objects

    def _scene_effects(self):
        """(object, effect) of every enabled effect of the scene as it is now, but those the snapshot skipped."""
        return self.snapshot.runnable(scene_effects(self.scene, self._objects(has_effects)))

    def _build(self, snapshot: SceneSnapshot | None = None) -> None:
        """Systems for the scene's effects as they are set now, and an empty timeline."""
        previous = self.effects
        self.snapshot = snapshot or read_snapshot(self.scene)
        self.effects = self.snapshot.named_settings
        names = {name for name, _ in self.effects}
        self.lost += [f"emitter '{name}' was deleted: its effect stopped" for name, _ in previous
                      if name not in names and self.scene.objects.get(name) is None]
        interval, current = self.scene.gpu_particles.cache_interval, self.scene.frame_current
        self.simulation = SceneSimulation(self.host, self.snapshot, self._read_frame, interval)
        if self.scene.frame_current != current:  # it read the start frame's inputs (warnings before any frame)
            self.scene.frame_set(current)
        self.simulation.timeline.store = self._store(interval)

    def follow(self, now: SceneSnapshot) -> Edit:
        """Take the scene as read in ``now`` at what edits.edit_between says the edit costs: a new simulation
        (RESIMULATE), or the next frame drawn from the simulated history with the new settings."""
        edit = edit_between(self.snapshot, now)
        if edit is Edit.RESIMULATE:
            if now.cloud != self.snapshot.cloud:
                self.cloud = self._cloud(now)
            self._build(now)
            return edit
        if edit is Edit.NONE:
            return edit
        if render_edit(self.snapshot.render, now.render) is Edit.RELOOK:
            self._use_render(now.render)
        elif now.render != self.snapshot.render:
            self._use_glints(now.render)
        self.simulation.relook(now)
        self.snapshot, self.effects = now, now.named_settings
        return edit

    def _follow_edits(self) -> bool:
        """The effects as set now (validated again only when they may have changed): True when the edit
        started a fresh simulation."""
        now = self.watch.snapshot(self.scene, self._scene_effects(), self.scene.frame_current, self.snapshot)
        return self.follow(now) is Edit.RESIMULATE

    def _store(self, interval: int) -> SimCache | None:
        """The disk cache this renderer reads (and fills, for bakes); a cache it must refuse is a warning
        here and an error for a bake."""
        settings = self.scene.gpu_particles
        folder = cache_folder(self.scene) if self.cache_mode != "OFF" and settings.use_disk_cache else None
        if folder is None or not self.effects:
            return None
        try:
            return SimCache(folder, self.simulation, interval, settings.cache_every_frame,
                            writing=self.cache_mode == "WRITE")
        except CacheError as error:
            if self.cache_mode == "WRITE":
                raise
            self.cache_warnings = [str(error)]
            return None

    def _read_frame(self, frame: int, previous: FrameInputs | None) -> FrameInputs:
        self.scene.frame_set(frame)
        return read_frame(self.scene, frame, self._emitter_matrices(), previous, self._objects,
                          tuple(effect.target for effect in self.snapshot.effects))

    def _emitter(self, name: str):
        obj = self.scene.objects.get(name)
        if obj is None:
            raise SettingsError(f"emitter object '{name}' is no longer in the scene")
        return obj

    def _emitter_matrices(self):
        return [np.array(self._emitter(name).matrix_world) for name, _ in self.effects]

    @property
    def warnings(self) -> list[str]:
        """Everything wrong now, the spawned effects' lost births included (a readback each)."""
        return self.frame_warnings + self.simulation.spawn_overflows() + self.simulation.neighbour_overflows()

    @property
    def frame_warnings(self) -> list[str]:
        """What is wrong as of the frame drawn last, read without waiting for the GPU: a bake gathers them every
        frame (a light animated to no power, a collider deformed past use show on their frames only)."""
        sdf = self.simulation.sdf
        return (list(self.snapshot.clamps) + self.lost + [skipped.warning for skipped in self.snapshot.skipped]
                + self.snapshot.rate_warnings() + self.simulation.family_warnings + list(self.simulation.inputs.warnings)
                + (list(sdf.warnings.values()) if sdf is not None else []) + self.cache_warnings
                + list(self.light_warnings) + list(self.cloud_warnings))

    def cache_record(self) -> dict | None:
        """Where the disk cache is and what this renderer took from it and added (the bake's sidecar)."""
        timeline, store = self.simulation.timeline, self.simulation.timeline.store
        if store is None:
            return None
        return {"folder": str(store.folder), "loaded_checkpoints": timeline.loaded, "written_checkpoints": store.written}

    def prepare(self, frame: int):
        """Steps (preroll progress) to run before rendering ``frame`` from a fresh start; see SceneSimulation."""
        self._follow_edits()
        return self.simulation.prepare(max(frame, self.simulation.start_frame))

    def advance_to(self, frame: int) -> None:
        """Simulate up to ``frame``; changed settings re-simulate from the start, unless only their look changed.
        Settings keyed over the shot are read again at ``frame`` once the scene is there: a keyed look draws at
        its frame's value."""
        self._follow_edits()
        self.simulation.seek(frame)
        if self.scene.frame_current != frame:
            self.scene.frame_set(frame)
        if self.watch.keyed and self._follow_edits():
            self.simulation.seek(frame)

    def update_ramps(self) -> None:
        """Color ramps are read when compositing: editing one recolors without re-simulating."""
        for system, (_, effect) in zip(self.simulation.systems, self._scene_effects()):
            system.ramp = ramp_colors(effect)

    def _camera_matrix_at(self, frames: float) -> np.ndarray:
        """The scene camera's world matrix ``frames`` from the current frame (a subframe evaluation, then back)."""
        if frames == 0.0:
            return np.array(self.scene.camera.matrix_world)
        frame = self.scene.frame_current
        whole = math.floor(frame + frames)
        self.scene.frame_set(whole, subframe=frame + frames - whole)
        matrix = np.array(self.scene.camera.matrix_world)
        self.scene.frame_set(frame)
        return matrix

    def needs_sprites(self) -> bool:
        return any(system.settings.blend_mode == "ALPHA" for system in self.simulation.systems)

    def frame_data(self, frame: int, shown: list[bool]) -> FrameData:
        """What drawing ``frame`` takes from the scene for the effects ``shown`` (one flag per effect), read
        once (the scene is at ``frame`` now)."""
        emitters = [m for m, keep in zip(self._emitter_matrices(), shown) if keep]
        effects = [e for e, keep in zip(self._scene_effects(), shown) if keep]
        return read_drawing(self.scene, frame, emitters, effects,
                            self._objects(is_primitive) if self.cloud is not None else None, self._objects(is_light))

    def visibility(self, depsgraph):
        """What of the scene this view sees (scene/visibility.py): a render of ``depsgraph``'s view layer."""
        return render_visibility(self.scene, depsgraph)

    def shadow_volume(self) -> ShadowVolume | None:
        """The shadow volume the lit effects' particles shadow each other in (None while no effect is lit);
        remade when the scene's shadow resolution changes."""
        if not any(is_lit(system.settings) for system in self.simulation.systems):
            return None
        resolution = self.snapshot.render.shadow_resolution
        if self.shadows is None or self.shadows.resolution != resolution:
            self.shadows = ShadowVolume(self.host, resolution)
        return self.shadows

    def scene_shadow_target(self, width: int, height: int, kept: SurfaceShadow | None) -> SurfaceShadow | None:
        """Where a view of ``width`` x ``height`` draws the particles' shadows on the scene (``kept``: its last,
        reused at that size), or None: not asked for, no effect casting them, or no scene depth (then
        ``light_warnings`` says so)."""
        if not self.shadows_on_scene or not any(casts_on_scene(s.settings) for s in self.simulation.systems):
            return None
        if self.prepass is None:
            self.light_warnings += (NEEDS_DEPTH,)
            return None
        if kept is None or (kept.image.width, kept.image.height) != (width, height):
            kept = SurfaceShadow(self.host, width, height)
        return kept

    def composite_view(self, frame: int, camera: Camera, view, targets: Targets, depsgraph=None, lap=None) -> None:
        """Everything after simulating, for one view into ``targets`` (the frame stays on the GPU):
        :func:`~..engine.pipeline.record_frame` with this frame's data, sorting from ``view`` (world to view).

        The bake draws the scene camera's view; the viewport overlay each 3D view's.  Only the effects whose
        emitter the view sees draw (``visibility``; hidden ones keep simulating), in front of the occluders it sees;
        ``depsgraph``: the view layer's (None: the one a render of the scene follows, ``render_view_layer``).
        ``lap(stage)`` (a context manager) times the stages for the Stats panel.
        """
        depsgraph = depsgraph or layer_depsgraph(render_view_layer(self.scene))
        visibility = self.visibility(depsgraph)
        shown = [visibility.shows_particles(self._emitter(name)) for name, _ in self.effects]

        def draw_depth(view_proj, scene_depth):
            self.prepass.draw(self.scene, depsgraph, view_proj, scene_depth)

        def draw_light_shadows(lights):
            if self.light_shadow_maps is None:
                self.light_shadow_maps = LightShadowMaps(self.host)
            meshes, models = scene_occluders(self.scene, depsgraph, self.prepass.kept if self.prepass else None)
            return self.light_shadow_maps.draw(meshes, models, lights)

        simulation = self.simulation
        data = self.frame_data(frame, shown)
        self.drawn = [system for system, keep in zip(simulation.systems, shown) if keep]
        sorts = [sort for sort, keep in zip(simulation.sorts, shown) if keep]
        self.light_warnings = data.lights.warnings
        if self.shadows_on_scene:
            targets.surface_shadow = self.scene_shadow_target(camera.width, camera.height, targets.surface_shadow)
        self.cloud_warnings = record_frame(
            self.drawn, sorts, data, camera, np.asarray(view), targets,
            self.cloud.points if self.cloud is not None else None,
            draw_depth if self.prepass is not None else None, self.exact_sort, lap, self.shadow_volume(),
            draw_light_shadows)

    def draw(self, frame: int) -> None:
        """Simulate to ``frame`` and composite it from the scene camera into ``resources.frame`` (no readback)."""
        self.advance_to(frame)
        if self.sprites is None and self.needs_sprites():
            self.sprites = SpriteLayer(self.host, self.width, self.height)
        camera = camera_of(self.scene, self.width, self.height, self._camera_matrix_at)
        targets = Targets(self.compositor, self.sprites, self.glints, self.surface_shadow)
        self.composite_view(frame, camera, self.scene.camera.matrix_world.inverted(), targets)
        self.surface_shadow = targets.surface_shadow

    def take_stats(self) -> None:
        """The drawn frame's overflows and peak (a small readback: waits for the GPU); AUTO Emax follows them."""
        self.frame_stats = self.compositor.take_stats()

    def render(self, frame: int) -> np.ndarray:
        """The linear RGBA float frame (height, width, 4), rows bottom to top."""
        self.draw(frame)
        frame_pixels = self.compositor.read_frame()
        self.take_stats()
        return frame_pixels

    def stats(self) -> dict:
        """Counts read back from the GPU: a sync, so once per bake rather than per frame."""
        return {
            "live_particles": [system.live.read_count() for system in self.simulation.systems],
            "csg_samples": self.cloud.cloud.read_count() if self.cloud is not None else None,
            "csg_warnings": self.cloud_warnings,
            # Per effect: (adjacent pairs in order, sampled Kendall tau) of its sorted order; None: unsorted.
            "sortedness": [sort.sortedness() for sort in self.simulation.sorts],
        }
