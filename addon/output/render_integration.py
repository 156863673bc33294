"""Particles in Blender's own renders: F12, Render Animation, ``blender -b file.blend -a``.

For every frame a render starts (``render_pre``), the scene's particle layer
(``render_layer.py``) is rendered on the GPU, read back once and handed to the
scene's helper scene (``layer_scene.py``), whose render passes the scene's
compositor nodes (``compositor_nodes.py``) read.  Blender's compositor then lays the light over the frame it rendered, hidden where each view layer's depth pass is nearer.  Any engine,
any output format; no file is written unless *Write Layer Files* asks.

Every frame gets exactly its own particles or none: a frame whose layer was
not made in this render (effect off, *Composite into Renders* off, emitter
deleted, a Full Copy scene without it, a layer that failed) gets the empty
layer, which passes the render through untouched, and the Light node's label
says why.  The hand-over is withdrawn when a render ends, and nothing of it is
saved, so a .blend opened without the add-on renders clean.  Failures are collected per
render and shown: printed (a farm's log), in the panel (``draw_settings``),
and in a pop-up where there is a window.  *Post Processing > Compositing* is the
artist's: never ticked on here; off, renders get no particles and the panel says
why, with a button that ticks it.

Where the GPU work runs, and why before the frame rather than in it:

* Background (``blender -b ... -a``, the bpy module, render farms): render
  handlers run on the main thread, synchronously inside
  ``bpy.ops.render.render``; the add-on's GPU context (``gpu.init()``) is
  usable there, also between EEVEE frames, which bind and release their own
  context.  With the CPU compositor the helper scene's render binds it again
  after a frame (:func:`_check_gpu_context`, tests/output/test_cpu_compositor.py).
* GUI (F12, Render Animation): the render runs as a window-manager job on a
  worker thread (``screen_render_invoke`` -> ``WM_jobs_start`` ->
  ``render_startjob`` -> ``RE_RenderFrame``/``RE_RenderAnim``, which call the
  render handlers from that thread), where no GPU context of ours is bound.
  The handler therefore hands the work to the main thread and waits: a
  ``bpy.app.timers`` function (:func:`_drain`) runs it there, because
  ``wm_event_do_notifiers`` runs timers on the main thread on every pass of
  the event loop, also while a render job runs and the interface is locked.
  Waits are bounded (``MAIN_THREAD_WAIT``) and end when the render is
  cancelled; work a render thread gave up on is dropped, never run late.
  tests/output/test_render_handoff.py runs this hand-off with real threads.
* Not in the compositor: Blender 5.2 has no Python compositor nodes, and the
  render's depth pass is only known after the frame, too late for the splat's
  own depth test.  The compositor compares depths instead (per pixel, with
  the nearest particle's depth).
"""

from __future__ import annotations

import queue
import threading
import time

import bpy
from bpy.app.handlers import persistent
from bpy.props import BoolProperty, FloatProperty, StringProperty

from ..engine.light.surface_shadow import NEEDS_DEPTH
from ..engine.settings.settings import SettingsError
from ..hosts.base import GPUMemoryError, NoGPUError, ShaderCompileError
from ..hosts.blender import gpu_context_bound
from ..properties import register_factory, scene_effects
from . import compositor_nodes, layer_scene
from .render_layer import ParticleLayer, free_scratch

MAIN_THREAD_WAIT = 600.0  # seconds a render thread waits for the main thread before giving up
DRAIN_INTERVAL = 0.01  # seconds between the main thread's looks for work from a render thread
GPU_COMPOSITOR = "Render Properties > Performance > Compositor: GPU"  # the setting that keeps a context bound
COMPOSITING_OFF = "Post Processing > Compositing is off"  # (Render Properties) then Blender composites nothing
LAYER_ERRORS = (SettingsError, NoGPUError, GPUMemoryError, ShaderCompileError, OSError, RuntimeError, ValueError)


class GPU_PARTICLES_PG_output(bpy.types.PropertyGroup):
    """Where baked frames and render layers go (never the render's own output path)."""

    bake_path: StringProperty(
        name="Bake Output", default="//particles/", subtype="FILE_PATH", options={"PATH_SUPPORTS_BLEND_RELATIVE"},
        description="Folder and name of baked frames ('#' is the frame number), apart from the render output")
    layer_path: StringProperty(
        name="Render Layer", default="//particles/layer/", subtype="DIR_PATH", options={"PATH_SUPPORTS_BLEND_RELATIVE"},
        description="Folder of the particle layer files (light and depth EXR) written for each rendered frame "
                    "when Write Layer Files is on, for compositing elsewhere")
    use_render: BoolProperty(
        name="Composite into Renders", default=True,
        description="Render the particles for every frame Blender renders and lay them over it in the compositor")
    write_layer_files: BoolProperty(
        name="Write Layer Files", default=False,
        description="Also write each rendered frame's particle layer to the Render Layer folder (the compositor "
                    "reads it from memory either way)")
    write_points: BoolProperty(
        name="Write Point Cache", default=False,
        description="Also write each baked frame's particles (position, velocity, size, color, age, id, rotation) "
                    "as a PLY file in a 'points' folder beside the frames, which Add to Scene plays in any Blender")
    write_volumes: BoolProperty(
        name="Write Volumes", default=False,
        description="Also write each baked frame's particles as OpenVDB volume grids in a 'volumes' folder beside "
                    "the frames, for Cycles' and EEVEE's own volume rendering")
    volume_voxel_size: FloatProperty(
        name="Voxel Size", default=0.0, min=0.0, soft_max=1.0, unit="LENGTH", precision=4,
        description="Edge of one voxel of the written volumes (0: Auto, half of each effect's particle size, "
                    "coarser where the particles spread over more than 512 voxels)")
    write_usd: BoolProperty(
        name="Write USD", default=False,
        description="Also write the baked particles as USD points (a file per frame in a 'usd' folder and one "
                    "file for the whole range beside the frames), for Houdini, usdview or Blender's USD import")


def why_not(scene) -> str | None:
    """Why a render of ``scene`` gets no particles, or None when it does."""
    if not scene.gpu_particles_output.use_render:
        return "Composite into Renders is off"
    if not scene_effects(scene):
        return "no enabled effect in the scene"
    if scene.camera is None:
        return "the scene has no camera"
    if not scene.render.use_compositing:  # the artist's choice, never ticked behind their back
        return COMPOSITING_OFF
    return None


class RenderCancelled(Exception):
    """The render was cancelled while its thread waited for the main thread."""


class _Session:
    """The render in progress: its layer renderer (one scene, built on its first frame) and its failures."""

    layer: ParticleLayer | None = None
    errors: list[str] = []
    cancelled = threading.Event()


_session = _Session()
_requests: queue.Queue = queue.Queue()
last_errors: dict[str, list[str]] = {}  # scene name: what its last render could not do (the panel shows it)


class _Request:
    """Work a render thread hands to the main thread; dropped if its thread gave up before it started."""

    def __init__(self, work):
        self.work, self.done, self.lock = work, threading.Event(), threading.Lock()
        self.state, self.result, self.error = "queued", None, None

    def run(self) -> None:
        with self.lock:
            if self.state != "queued":
                return
            self.state = "running"
        try:
            self.result = self.work()
        except BaseException as error:  # handed back to the render thread
            self.error = error
        self.done.set()

    def give_up(self) -> bool:
        """Drop the request unless it is already running (then it is waited for)."""
        with self.lock:
            if self.state == "queued":
                self.state = "dropped"
            return self.state == "dropped"


def _on_main_thread(work, cancellable: bool = True):
    """Run ``work()`` on the main thread and return its result (directly when already there).

    The wait ends after ``MAIN_THREAD_WAIT`` seconds (TimeoutError) or, when ``cancellable``, once the render
    is cancelled (RenderCancelled); work not started by then never runs."""
    if threading.current_thread() is threading.main_thread():
        return work()
    request = _Request(work)
    _requests.put(request)  # _drain picks it up: registering a timer is not safe off the main thread
    deadline = time.monotonic() + MAIN_THREAD_WAIT
    while not request.done.wait(DRAIN_INTERVAL):
        cancelled = cancellable and _session.cancelled.is_set()
        if (cancelled or time.monotonic() > deadline) and request.give_up():
            if cancelled:
                raise RenderCancelled()
            raise TimeoutError(f"the main thread did not take the particle layer within {MAIN_THREAD_WAIT:.0f} s")
    if request.error is not None:
        raise request.error
    return request.result


def _drain():
    """The main thread's side of :func:`_on_main_thread`, polled by a timer (GUI only: timers never run in -b)."""
    while True:
        try:
            request = _requests.get_nowait()
        except queue.Empty:
            return DRAIN_INTERVAL
        request.run()


def _free() -> None:
    """Drop the layer renderer: on the main thread, where its GPU textures were made."""
    if _session.layer is not None:
        _session.layer.free()
    _session.layer = None
    free_scratch()


def _report(scene, frame: int, error: Exception) -> None:
    """A failed layer never fails the render: the frame renders without particles and says why."""
    message = f"GPU Particles: frame {frame} of '{scene.name}' rendered without particles: {error}"
    _session.errors.append(message)
    print(message)


def _note_once(scene, warnings) -> None:
    """Shadows on Scene skipped (no scene depth): said once a render; the frame renders without them."""
    message = f"GPU Particles: '{scene.name}': {NEEDS_DEPTH}"
    if NEEDS_DEPTH in warnings and message not in _session.errors:
        _session.errors.append(message)
        print(message)


def _prepare(scene) -> None:
    _free()
    compositor_nodes.ensure_compositing(scene)


def _check_gpu_context() -> None:
    """Blender's GPU context is bound on the main thread before the layer's dispatches, or NoGPUError.

    In a background render the engine releases its own context after each frame
    (``DRW_render_context_disable``), and with the CPU compositor nothing bound one again before the next
    frame's ``render_pre`` (then the ``gpu`` module segfaults).  The helper scene's render (``layer_scene.py``),
    which Blender runs on the main thread after the scene's, leaves Blender's main context bound (verified
    on 5.2.3 with Workbench, EEVEE and Cycles, Persistent Data on or off).  Before the helper scene, Persistent
    Data was turned off and on again here to free the render's engine, which bound the context the same way
    and threw the persistent data away each frame."""
    if not gpu_context_bound():
        raise NoGPUError(f"Blender left no GPU context bound after the previous frame (the CPU compositor "
                         f"does in background renders); set {GPU_COMPOSITOR}")


def _composite_frame(scene, frame: int) -> None:
    """Main thread: this frame's layer into the compositor's images, or the images emptied and the reason
    on the Light node."""
    why = why_not(scene)
    if why is not None:
        compositor_nodes.empty_layer(scene, f"{compositor_nodes.PREFIX}frame {frame}: {why}")
        return
    try:
        _check_gpu_context()
        if _session.layer is None or _session.layer.scene != scene:
            _free()
            _session.layer = ParticleLayer(scene)
            for skipped in _session.layer.renderer.snapshot.skipped:  # the others render: said once a render
                _session.errors.append(f"GPU Particles: '{scene.name}': {skipped.warning}; the other effects render")
                print(_session.errors[-1])
        passes = _session.layer.layer(frame)
        _note_once(scene, _session.layer.renderer.light_warnings)
        if scene.frame_current != frame:  # the simulation may have stepped the scene through earlier frames
            scene.frame_set(frame)
        if scene.gpu_particles_output.write_layer_files:
            _session.layer.write(frame, passes)
        compositor_nodes.show_layer(scene, frame, passes, f"{compositor_nodes.PREFIX}frame {frame}'s particles")
    except LAYER_ERRORS as error:
        _report(scene, frame, error)
        compositor_nodes.empty_layer(scene, f"{compositor_nodes.PREFIX}frame {frame}: {error}")


def _publish_errors(scene) -> None:
    """The render's failures, where the artist looks: the panel, and a pop-up in the interface."""
    errors = list(_session.errors)
    last_errors[scene.name] = errors
    if not errors or bpy.app.background:
        return
    window_manager = bpy.context.window_manager
    if window_manager is not None and window_manager.windows:
        def draw(menu, _context):
            for line in errors[:8]:
                menu.layout.label(text=line)
        window_manager.popup_menu(draw, title=f"GPU Particles: {len(errors)} problem(s) in this render",
                                  icon="ERROR")


@persistent
def on_render_init(scene, *_):
    _session.cancelled.clear()
    _session.errors = []
    why = why_not(scene)
    if why == COMPOSITING_OFF:  # likely an oversight: said in a farm's log too
        print(f"GPU Particles: '{scene.name}' renders without particles: {why}")
    if why is None or compositor_nodes.has_nodes(scene):  # (a deleted helper scene is made again either way)
        try:
            _on_main_thread(lambda: _prepare(scene) if why is None else compositor_nodes.ensure_light(scene))
        except (RenderCancelled, TimeoutError) as error:
            _report(scene, scene.frame_current, error)


@persistent
def on_render_pre(scene, *_):
    if why_not(scene) is not None and not compositor_nodes.has_nodes(scene):
        return  # nothing of ours in this scene's compositing
    frame = scene.frame_current
    try:
        _on_main_thread(lambda: _composite_frame(scene, frame))
    except RenderCancelled:
        pass
    except TimeoutError as error:
        _report(scene, frame, error)


def _end(scene) -> None:
    """The render is over: its last layer is withdrawn (a later render never sees it)."""
    compositor_nodes.empty_layer(scene)
    _free()
    _publish_errors(scene)


@persistent
def on_render_complete(scene, *_):
    _on_main_thread(lambda: _end(scene), cancellable=False)


@persistent
def on_render_cancel(scene, *_):
    """Also ends the wait of a render thread for the main thread."""
    _session.cancelled.set()
    _on_main_thread(lambda: _end(scene), cancellable=False)


@persistent
def on_load_post(*_):
    """A loaded file gets no layer of another file; its last render's failures are another file's."""
    layer_scene.withdraw()
    compositor_nodes.replace_previous_version()  # its stale file-backed nodes, also where no render sets up ours
    last_errors.clear()


class GPU_PARTICLES_OT_setup_compositing(bpy.types.Operator):
    """Add (or repair) the compositor nodes that lay the particles over the render"""

    bl_idname = "gpu_particles.setup_compositing"
    bl_label = "Set Up Compositing"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        scene = context.scene
        tree = compositor_nodes.ensure_compositing(scene, repair=True)
        self.report({"INFO"}, f"Particle nodes are in the compositing tree '{tree.name}'")
        return {"FINISHED"}


class GPU_PARTICLES_OT_use_compositing(bpy.types.Operator):
    """Turn Render Properties > Post Processing > Compositing on, so that renders composite the particles"""

    bl_idname = "gpu_particles.use_compositing"
    bl_label = "Turn On Compositing"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        context.scene.render.use_compositing = True
        self.report({"INFO"}, "Compositing is on: renders composite the particles")
        return {"FINISHED"}


def draw_settings(layout, scene) -> None:
    """The output settings in the panel's Render & Bake section."""
    output = scene.gpu_particles_output
    layout.prop(output, "bake_path")
    files = layout.column(heading="Bake Also", align=True)
    for name in ("write_points", "write_volumes", "write_usd"):
        files.prop(output, name)
        if name == "write_volumes" and output.write_volumes:
            files.prop(output, "volume_voxel_size")
    layout.prop(output, "use_render")
    column = layout.column()
    column.active = output.use_render
    column.prop(output, "write_layer_files")
    row = column.row()
    row.active = output.write_layer_files
    row.prop(output, "layer_path")
    column.operator(GPU_PARTICLES_OT_setup_compositing.bl_idname, icon="NODE_COMPOSITING")
    if output.use_render and not scene.render.use_compositing:
        column.label(text=f"No particles in renders: {COMPOSITING_OFF}", icon="ERROR")
        column.operator(GPU_PARTICLES_OT_use_compositing.bl_idname, icon="NODE_COMPOSITING")
    errors = last_errors.get(scene.name, [])
    for line in errors[:3]:
        layout.label(text=line.removeprefix("GPU Particles: "), icon="ERROR")
    if len(errors) > 3:
        layout.label(text=f"... and {len(errors) - 3} more frames without particles (see the console)")


CLASSES = (GPU_PARTICLES_PG_output, GPU_PARTICLES_OT_setup_compositing, GPU_PARTICLES_OT_use_compositing)
_register_classes, _unregister_classes = register_factory(
    CLASSES, ((bpy.types.Scene, "gpu_particles_output", GPU_PARTICLES_PG_output),))
_HANDLERS = (("render_init", on_render_init), ("render_pre", on_render_pre),
             ("render_complete", on_render_complete), ("render_cancel", on_render_cancel),
             ("load_post", on_load_post))


def register():
    layer_scene.register()
    _register_classes()
    for name, handler in _HANDLERS:
        getattr(bpy.app.handlers, name).append(handler)
    if not bpy.app.background:
        bpy.app.timers.register(_drain, persistent=True)


def unregister():
    if bpy.app.timers.is_registered(_drain):
        bpy.app.timers.unregister(_drain)
    for name, handler in _HANDLERS:
        handlers = getattr(bpy.app.handlers, name)
        if handler in handlers:
            handlers.remove(handler)
    _free()
    _unregister_classes()
    layer_scene.unregister()
