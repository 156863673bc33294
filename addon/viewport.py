"""Live overlay: the scene's particles composited over every 3D viewport that shows them.

GPU work happens only in the draw callback, where Blender has a GPU context
bound. The frame-change handler only tags viewports for redraw and a changed
setting only marks the simulation stale. The simulation is the bake's own
(:class:`~.scene.renderer.SceneRenderer`: a step forward per frame, a restart from the
start frame with each effect's preroll when going back or after an edit), run
on a frame cursor: ``scene.frame_set`` must not run inside a draw callback, so
emitters are read from their F-curves at the cursor (:func:`matrix_at`);
drivers, constraints and NLA use the object's current matrix.
"""

from __future__ import annotations

import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from functools import lru_cache

import bpy
import numpy as np
from mathutils import Euler, Matrix, Quaternion, Vector

from .engine.draw.compositing import Camera, Compositor
from .engine.draw.depth import SceneDepth
from .engine.draw.frame_resources import FrameResources
from .engine.draw.glints import GlintStage, wanted
from .engine.draw.sprites import SpriteLayer
from .engine.order.tile_lists import VIEWPORT_CHECK_EVERY
from .engine.pipeline import Targets
from .engine.settings.settings import RenderSettings
from .hosts.blender import BlenderHost
from .properties import ON_CHANGE, ON_LOOK, ON_REDRAW, has_effects, scene_effects
from .scene.csg import is_primitive, scene_has_cloud
from .scene.depth_prepass import DepthPrepass, KeptMeshes
from .scene.edits import Edit, edit_between, emitters_edit, render_edit
from .scene.index import SceneIndex, scene_edited
from .scene.renderer import SceneRenderer, with_lens
from .scene.snapshot import EffectsWatch, SceneSnapshot
from .scene.visibility import ViewportVisibility

MAX_VIEW_TARGETS = 4  # compositor targets kept for differently sized viewports
SCENE_INDEX = SceneIndex()  # which objects emit, push, collide, build the cloud or occlude: kept until an edit


def _indexed_effects(scene):
    """properties.scene_effects over the objects the index keeps."""
    return scene_effects(scene, SCENE_INDEX.objects(scene, has_effects))


def _indexed_has_cloud(scene) -> bool:
    """scene.csg.scene_has_cloud over the objects the index keeps."""
    return scene_has_cloud(scene, SCENE_INDEX.objects(scene, is_primitive))


def _fcurves(obj):
    from bpy_extras.anim_utils import animdata_get_channelbag_for_assigned_slot

    if obj.animation_data is None:
        return {}
    bag = animdata_get_channelbag_for_assigned_slot(obj.animation_data)
    return {(c.data_path, c.array_index): c for c in bag.fcurves} if bag is not None else {}


def _channel(obj, curves, path, frame):
    value = list(getattr(obj, path))
    for index in range(len(value)):
        curve = curves.get((path, index))
        if curve is not None:
            value[index] = curve.evaluate(frame)
    return value


def _evaluated_elsewhere(obj) -> bool:
    """Motion this module does not evaluate: constraints, drivers, NLA, delta transforms, non-object parents."""
    animation = obj.animation_data
    deltas = (any(obj.delta_location) or any(obj.delta_rotation_euler) or tuple(obj.delta_scale) != (1, 1, 1)
              or tuple(obj.delta_rotation_quaternion) != (1, 0, 0, 0))
    return bool(obj.constraints or deltas or obj.parent_type != "OBJECT"
                or (animation and (animation.drivers or animation.nla_tracks)))


def matrix_at(obj, frame: float) -> Matrix:
    """The object's world matrix at ``frame`` from its transform F-curves, without a frame change."""
    curves = _fcurves(obj)
    if _evaluated_elsewhere(obj):
        return obj.matrix_world.copy()
    location = Vector(_channel(obj, curves, "location", frame))
    scale = Vector(_channel(obj, curves, "scale", frame))
    if obj.rotation_mode == "QUATERNION":
        rotation = Quaternion(_channel(obj, curves, "rotation_quaternion", frame)).normalized()  # as Blender does
    elif obj.rotation_mode == "AXIS_ANGLE":
        angle, *axis = _channel(obj, curves, "rotation_axis_angle", frame)
        rotation = Quaternion(axis, angle)
    else:
        rotation = Euler(_channel(obj, curves, "rotation_euler", frame), obj.rotation_mode)
    local = Matrix.LocRotScale(location, rotation, scale)
    if obj.parent is None:
        return local
    return matrix_at(obj.parent, frame) @ obj.matrix_parent_inverse @ local


@dataclass
class Stats:
    """What the last drawn frame cost and held (the Stats panel shows it)."""

    frame: int
    slots: int
    alive: int
    overflow: int
    stage_ms: dict[str, float] = field(default_factory=dict)
    emax: float | None = None  # the Emax the next frame uses, when it follows the frames (AUTO)
    spawn_lost: int = 0  # births the spawned effects lost to overflow since the start (events.Spawner)
    neighbours_cut: int = 0  # interacting particles with more neighbours than a gather visits (neighbours.py)


class _Stopwatch:
    """Wall time per stage with the GPU drained at both ends (so the GPU work is inside)."""

    def __init__(self, host):
        self.host = host
        self.ms: dict[str, float] = {}

    @contextmanager
    def __call__(self, stage):
        self.host.finish()
        start = time.perf_counter()
        yield
        self.host.finish()
        self.ms[stage] = self.ms.get(stage, 0.0) + (time.perf_counter() - start) * 1000


class _FrameCursor:
    """The scene as a simulation inside a draw callback sees it: ``frame_set`` moves only this cursor.

    Blender's own frame must not change while a view draws (that would
    re-evaluate the scene and run frame handlers from inside drawing).
    """

    def __init__(self, scene):
        self._scene = scene
        self.frame_current = scene.frame_current

    def frame_set(self, frame: int, subframe: float = 0.0) -> None:
        self.frame_current = frame

    def __getattr__(self, name):
        return getattr(self._scene, name)


class ViewportRenderer(SceneRenderer):
    """The bake's renderer (same steps, preroll, restarts and GPU checkpoints), with emitters read from
    their F-curves."""

    def __init__(self, scene, host, kept_meshes: KeptMeshes, snapshot: SceneSnapshot | None = None):
        self._matrices = {}  # frame -> the emitters' matrices there, read once a draw
        self.drawn_effects = None  # (object, effect) pairs as this draw's Overlay._sync found them
        self._kept_meshes = kept_meshes
        super().__init__(_FrameCursor(scene), 1, 1, host, snapshot=snapshot, shadows_on_scene=True)

    def _depth_prepass(self) -> DepthPrepass:
        """The occluders' triangles kept between draws (the overlay's, across simulations)."""
        return DepthPrepass(self._kept_meshes)

    def visibility(self, depsgraph) -> ViewportVisibility:
        """The overlay shows what the viewport shows (its occluders: ``depth_prepass.may_occlude``)."""
        return ViewportVisibility(depsgraph.view_layer)

    def _objects(self, test):
        """The objects that may pass ``test``, kept between edits (Blender evaluates edits before it redraws)."""
        return SCENE_INDEX.objects(self.scene, test)

    def new_draw(self) -> None:
        """Read the emitters afresh from now on (between draws they may have been moved by hand)."""
        self._matrices.clear()
        self.drawn_effects = None

    def _scene_effects(self):
        if self.drawn_effects is None:
            return super()._scene_effects()
        return self.snapshot.runnable(self.drawn_effects)

    def _emitter_matrices(self):
        """Each emitter's matrix at the cursor's frame (a draw asks up to three times: read once)."""
        frame = self.scene.frame_current
        matrices = self._matrices.get(frame)
        if matrices is None:
            matrices = self._matrices[frame] = [np.array(matrix_at(self.scene.objects[name], frame))
                                                for name, _ in self.effects]
        return matrices


@dataclass
class _ViewTarget(Targets):
    """A view size's targets (sprites made when an effect first draws in Alpha mode, glints when the
    scene's glints are on)."""

    stats_pending: bool = False  # the last frame's stats are still on the GPU (Auto Emax reads them next)


class Overlay:
    """The simulation a scene's viewports show, and one compositor target per viewport size."""

    def __init__(self, host=None):
        self.host = host or BlenderHost()
        self.renderer: ViewportRenderer | None = None
        self.watch = EffectsWatch()  # the effects' settings, validated again only after an edit
        self.targets: dict[tuple[int, int], _ViewTarget] = {}
        self.stale = True
        self.stats: Stats | None = None
        self.preroll = None  # a long preroll runs a piece per draw, so the viewport never freezes
        self.kept_meshes = KeptMeshes(SCENE_INDEX)  # the occluders' triangles, read again after edits

    @property
    def systems(self):
        return self.renderer.simulation.systems if self.renderer is not None else []

    @property
    def cloud(self):
        """The scene's CSG point cloud (``scene.csg.SceneCloud``) drawn with the effects, or None."""
        return self.renderer.cloud if self.renderer is not None else None

    @property
    def frame(self):
        return self.renderer.simulation.timeline.frame if self.renderer is not None else None

    def mark_stale(self) -> None:
        self.stale = True

    def _sync(self, scene) -> RenderSettings:
        """A fresh simulation when the edit since the simulated snapshot costs one (edits.edit_between), or a
        setting's update marked it stale; else the renderer takes the edit, keeping its history.  The render
        settings as read (the glints' apply from this frame on, without re-simulating)."""
        found = _indexed_effects(scene)
        renderer = self.renderer if self.renderer is not None and self.renderer.scene.name == scene.name else None
        now = self.watch.snapshot(scene, found, scene.frame_current,
                                  None if self.stale or renderer is None else renderer.snapshot,
                                  SCENE_INDEX.objects(scene, is_primitive))
        edit = Edit.RESIMULATE if renderer is None else edit_between(renderer.snapshot, now)
        if self.stale or edit is Edit.RESIMULATE:
            if edit >= Edit.RELOOK:
                self.targets.clear()
            self.stale = False
            self.renderer = ViewportRenderer(scene, self.host, self.kept_meshes, now)
            self.preroll = None
        elif edit is not Edit.NONE:
            if render_edit(renderer.snapshot.render, now.render) >= Edit.RELOOK:
                self.targets.clear()  # the views' compositors follow the new render settings
            renderer.follow(now)
        self.renderer.drawn_effects = found
        return now.render

    def _emitter_moved(self) -> bool:
        """An emitter moved by hand since the step to this frame (edits.emitters_edit)."""
        renderer = self.renderer
        return emitters_edit(renderer.simulation.inputs.emitters, renderer._emitter_matrices()) is Edit.RESIMULATE

    def advance_to(self, scene, frame: int, stopwatch=None) -> RenderSettings | None:
        """Bring every effect to ``frame``: forward steps, or a restart from the start frame (or the disk
        cache); the render settings, or None while a long preroll is still running, a piece per call."""
        if self.renderer is not None:
            self.renderer.new_draw()
            if self.renderer.simulation.inputs.frame == frame and self._emitter_moved():
                self.stale = True
        render = self._sync(scene)
        self.renderer.simulation.sdf_measure = stopwatch is not None  # SDF rebuilds timed with the GPU waited for
        if self.preroll is None:
            self.preroll = self.renderer.prepare(frame)
        with (stopwatch or (lambda stage: nullcontext()))("simulate"):
            if self.preroll.step():
                return None
            self.renderer.advance_to(max(frame, self.renderer.simulation.start_frame))
        return render

    def preroll_progress(self) -> float | None:
        """How far a running preroll is (0 to 1), None when none runs."""
        return self.preroll.fraction if self.preroll is not None and not self.preroll.finished else None

    def _target(self, width, height) -> _ViewTarget:
        """The compositor (with its scene depth when occlusion is on) for a view of this size."""
        target = self.targets.pop((width, height), None)
        if target is None:
            resources = FrameResources(self.host, width, height)
            compositor = Compositor(resources, self.renderer.compositor.render)
            compositor.antialias = compositor.render.viewport_point_filter == "ANTIALIASED"
            compositor.check_every = VIEWPORT_CHECK_EVERY  # the bokeh and quad lists: a read-back only at checks
            if self.renderer.prepass is not None:
                resources.use_depth(SceneDepth(self.host, width, height))
            target = _ViewTarget(compositor)
            while len(self.targets) >= MAX_VIEW_TARGETS:
                self.targets.pop(next(iter(self.targets)))
        self.targets[(width, height)] = target  # most recently used last
        if target.sprites is None and self.renderer.needs_sprites():
            target.sprites = SpriteLayer(self.host, width, height, check_every=VIEWPORT_CHECK_EVERY)  # reads back at checks
        return target

    def composite(self, scene, view_proj, view, width: int, height: int, depsgraph=None, measure: bool = False,
                  projection=None):
        """Simulate to the scene frame and composite this view (``view_proj``: world to clip,
        ``view``: world to view, for sorting); returns the float frame texture, or None while a long
        preroll runs (a piece each call).

        ``projection``: the view's projection when it looks through the scene
        camera (then the camera's motion and depth of field count, as in the bake).

        Only with ``measure`` (the Stats panel is shown) does the draw wait for the GPU: stage
        times, live and overflow counts.  Otherwise nothing is read back, except the previous
        frame's peak in Auto Emax mode (2 texels, before this frame's work is queued).
        """
        stopwatch = _Stopwatch(self.host) if measure else None
        previous = self.targets.get((width, height))
        if previous is not None and previous.stats_pending:  # read before this frame's work is queued
            previous.compositor.take_stats()  # the previous frame's peak sets this frame's Emax
            previous.stats_pending = False
        render = self.advance_to(scene, scene.frame_current, stopwatch)
        if render is None:
            return None
        target = self._target(width, height)
        if target.glints is None and wanted(render):
            target.glints = GlintStage(self.host, width, height, render)
        elif target.glints is not None:
            target.glints.render = render
        compositor = target.compositor
        auto = compositor.render.emax_mode == "AUTO"
        if measure and not auto:
            compositor.discard_stats()  # what unmeasured frames added up
        frame = scene.frame_current
        camera = with_lens(scene, Camera(np.asarray(view_proj, dtype=np.float64), width, height),
                           None if projection is None else np.asarray(projection, dtype=np.float64),
                           lambda frames: np.array(matrix_at(scene.camera, frame + frames)))
        targets = target if wanted(render) else Targets(compositor, target.sprites, surface_shadow=target.surface_shadow)
        self.renderer.composite_view(self.frame, camera, view, targets, depsgraph, stopwatch)
        target.surface_shadow = targets.surface_shadow  # (made on the first frame that casts on the scene)
        target.stats_pending = auto and not measure
        if measure:
            alive = sum(system.live.read_count() for system in self.systems)
            overflow = compositor.take_stats().overflow
            sdf = self.renderer.simulation.sdf
            if sdf is not None:
                stopwatch.ms["SDF rebuild"] = sdf.rebuild_ms
            lost = sum(system.spawner.read_overflow() for system in self.systems if system.spawner is not None)
            cut = sum(system.interactions.read_overflow() for system in self.systems if system.interactions is not None)
            self.stats = Stats(self.frame, sum(s.count for s in self.systems), alive, overflow, stopwatch.ms,
                               compositor.emax if auto else None, lost, cut)
        return compositor.resources.frame


_overlay: Overlay | None = None
_draw_handle = None
_stats_shown = False  # the Stats panel drew since the overlay last measured a frame


def overlay() -> Overlay:
    """The one overlay, created on first use (inside a draw callback or an operator)."""
    global _overlay
    if _overlay is None:
        _overlay = Overlay()
    return _overlay


def last_stats() -> Stats | None:
    return _overlay.stats if _overlay is not None else None


def preroll_progress() -> float | None:
    return _overlay.preroll_progress() if _overlay is not None else None


def stats_panel_drawn() -> None:
    """The Stats panel is on screen: the next draw measures (waiting for the GPU), and the views
    redraw now when the overlay draws and what the panel shows is not its current frame."""
    global _stats_shown
    _stats_shown = True
    if _overlay is not None and (_overlay.stats is None or _overlay.stats.frame != _overlay.frame):
        tag_redraw()


@lru_cache(maxsize=MAX_VIEW_TARGETS)
def _frame_quad(width: int, height: int):
    """The builtin shader and the view-sized quad the frame is laid with, made once per view size."""
    import gpu
    from gpu_extras.batch import batch_for_shader

    shader = gpu.shader.from_builtin("IMAGE_SCENE_LINEAR_TO_REC709_SRGB")
    return shader, batch_for_shader(shader, "TRI_STRIP", {
        "pos": ((0, 0), (width, 0), (0, height), (width, height)),
        "texCoord": ((0, 0), (1, 0), (0, 1), (1, 1)),
    })


def draw_frame_texture(texture, width: int, height: int) -> None:
    """Lay the linear particle frame (premultiplied, as the bake writes it) over the view, in pixel space."""
    import gpu

    shader, batch = _frame_quad(width, height)
    texture.filter_mode(False)  # one texel per pixel, no bleeding into neighbours
    gpu.state.blend_set("ALPHA_PREMULT")
    shader.uniform_sampler("image", texture)
    batch.draw(shader)
    gpu.state.blend_set("NONE")


# The particles' shadow on the scene (surface_shadow.py's darkening, R32F) as the factor 1 - darkening in the
# viewport's display encoding (sRGB, as the frame is laid): multiplied over the scene's pixels.
_SHADOW_VERTEX = "void main() { uv = texCoord; gl_Position = ModelViewProjectionMatrix * vec4(pos, 0.0, 1.0); }"
_SHADOW_FRAGMENT = """
void main()
{
  float factor = clamp(1.0 - texture(image, uv).r, 0.0, 1.0);
  float encoded = factor <= 0.0031308 ? 12.92 * factor : 1.055 * pow(factor, 1.0 / 2.4) - 0.055;
  color = vec4(vec3(factor < 1.0 ? encoded : 1.0), 1.0); /* unshadowed: exactly as drawn */
}
"""


@lru_cache(maxsize=1)
def _shadow_shader():
    import gpu

    info = gpu.types.GPUShaderCreateInfo()
    interface = gpu.types.GPUStageInterfaceInfo("gpu_particles_shadow")
    interface.smooth("VEC2", "uv")
    info.vertex_in(0, "VEC2", "pos")
    info.vertex_in(1, "VEC2", "texCoord")
    info.vertex_out(interface)
    info.push_constant("MAT4", "ModelViewProjectionMatrix")
    info.sampler(0, "FLOAT_2D", "image")
    info.fragment_out(0, "VEC4", "color")
    info.vertex_source(_SHADOW_VERTEX)
    info.fragment_source(_SHADOW_FRAGMENT)
    return gpu.shader.create_from_info(info)


@lru_cache(maxsize=MAX_VIEW_TARGETS)
def _shadow_quad(width: int, height: int):
    from gpu_extras.batch import batch_for_shader

    return batch_for_shader(_shadow_shader(), "TRI_STRIP", {
        "pos": ((0, 0), (width, 0), (0, height), (width, height)),
        "texCoord": ((0, 0), (1, 0), (0, 1), (1, 1)),
    })


def draw_scene_shadow(texture, width: int, height: int) -> None:
    """Darken the scene's pixels under the particles' shadow (a multiply blend, before the particles are laid)."""
    import gpu

    shader = _shadow_shader()
    texture.filter_mode(False)
    gpu.state.blend_set("MULTIPLY")
    shader.bind()
    shader.uniform_sampler("image", texture)
    _shadow_quad(width, height).draw(shader)
    gpu.state.blend_set("NONE")


def draw_view(scene, view_proj, view, width: int, height: int, depsgraph=None, projection=None) -> None:
    """Composite the scene's particles for one view and draw them; what the draw callback runs
    (``projection``: the view's, when it looks through the scene camera)."""
    if not scene.gpu_particles.show_overlay or width < 1 or height < 1:
        return
    if not _indexed_effects(scene) and not _indexed_has_cloud(scene):
        return
    global _stats_shown
    measure, _stats_shown = _stats_shown, False
    frame = overlay().composite(scene, view_proj, view, width, height, depsgraph, measure, projection)
    if frame is None:  # prerolling: draw again soon for the next piece (not from inside this draw)
        if not bpy.app.timers.is_registered(_redraw_soon):
            bpy.app.timers.register(_redraw_soon, first_interval=0.0)
        return
    shadow = overlay().targets[(width, height)].surface_shadow
    if shadow is not None and shadow.drawn:
        draw_scene_shadow(shadow.image.native, width, height)
    draw_frame_texture(frame.native, width, height)


def _redraw_soon():
    tag_redraw()


def draw_region(context) -> None:
    """The draw callback's body for one 3D view: its region size and its own view and projection."""
    region, view = context.region, context.region_data
    if region is None or view is None:
        return
    view_layer = getattr(context, "view_layer", None)
    camera = context.scene.camera
    through_camera = view.view_perspective == "CAMERA" and camera is not None and camera.type == "CAMERA"
    draw_view(context.scene, view.perspective_matrix, view.view_matrix, region.width, region.height,
              view_layer.depsgraph if view_layer is not None else None,
              view.window_matrix if through_camera else None)


def _tag_sidebars(screen) -> None:
    """Redraw the sidebars (the Stats panel) only: tagging the whole area would redraw this view again."""
    for area in screen.areas if screen is not None else ():
        if area.type == "VIEW_3D":
            for region in area.regions:
                if region.type == "UI":
                    region.tag_redraw()


def _draw_callback():
    try:
        shown = last_stats()
        draw_region(bpy.context)
        if last_stats() is not shown:  # measured: the Stats panel redraws, and asks for the next
            _tag_sidebars(bpy.context.screen)
    except Exception as error:  # noqa: BLE001  (a draw callback must never raise into Blender's loop)
        if _overlay is not None:
            _overlay.stats = None
        print(f"GPU Particles overlay: {error}")


def tag_redraw() -> None:
    for window in getattr(bpy.context.window_manager, "windows", ()):
        for area in window.screen.areas:
            if area.type == "VIEW_3D":
                area.tag_redraw()


@bpy.app.handlers.persistent
def _on_frame_change(scene, depsgraph=None):
    """Only ask for a redraw: the draw callback does the GPU work with a context bound."""
    tag_redraw()


@bpy.app.handlers.persistent
def _on_load(*args):
    free()


def _on_settings_change():
    scene_edited()  # a script's edit too: the effects are validated again (snapshot.EffectsWatch)
    if _overlay is not None:
        _overlay.mark_stale()
    tag_redraw()


def _on_look_change():
    """An edit of how the simulation draws (a look or render setting): the effects validated again and redrawn;
    the overlay keeps its simulation (Overlay._sync)."""
    scene_edited()
    tag_redraw()


_on_edit = bpy.app.handlers.persistent(scene_edited)  # kept objects and occluder meshes are read again
HANDLERS = ((bpy.app.handlers.frame_change_post, _on_frame_change), (bpy.app.handlers.load_post, _on_load),
            *((handlers, _on_edit) for handlers in (bpy.app.handlers.depsgraph_update_post,
                                                    bpy.app.handlers.undo_post, bpy.app.handlers.redo_post)))


def free() -> None:
    """Drop the overlay's GPU textures (they go with the last reference) and what is kept about the scene's
    objects (another file's objects may sit where the last one's were)."""
    global _overlay
    _overlay = None
    scene_edited()
    _frame_quad.cache_clear()


def register() -> None:
    global _draw_handle
    _draw_handle = bpy.types.SpaceView3D.draw_handler_add(_draw_callback, (), "WINDOW", "POST_PIXEL")
    for handlers, function in HANDLERS:
        handlers.append(function)
    ON_CHANGE.append(_on_settings_change)
    ON_LOOK.append(_on_look_change)
    ON_REDRAW.append(tag_redraw)


def unregister() -> None:
    global _draw_handle
    if _draw_handle is not None:
        bpy.types.SpaceView3D.draw_handler_remove(_draw_handle, "WINDOW")
        _draw_handle = None
    for handlers, function in HANDLERS:
        while function in handlers:
            handlers.remove(function)
    while _on_settings_change in ON_CHANGE:
        ON_CHANGE.remove(_on_settings_change)
    while _on_look_change in ON_LOOK:
        ON_LOOK.remove(_on_look_change)
    while tag_redraw in ON_REDRAW:
        ON_REDRAW.remove(tag_redraw)
    free()
