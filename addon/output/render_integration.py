"""Particles in Blender's own renders: F12, Render Animation, ``blender -b file.blend -a``.

For every frame a render starts (``render_pre``), the scene's particle layer
(``render_layer.py``) is rendered on the GPU and written to the layer folder,
and the compositor's particle nodes (``compositor_nodes.py``) are pointed at
those files; Blender's compositor then lays them over the frame it rendered,
hidden where the render's depth pass is nearer.  Any engine, any output format.

Where the GPU work runs, and why before the frame rather than in it:

* Background (``blender -b ... -a``, the bpy module, render farms): render
  handlers run on the main thread, synchronously inside
  ``bpy.ops.render.render``; the add-on's GPU context (``gpu.init()``) is
  usable there, also between EEVEE frames, which bind and release their own
  context.  Verified here: tests/test_render_integration.py renders
  Workbench and EEVEE animations headless through these handlers.
* GUI (F12, Render Animation): the render runs as a window-manager job on a
  worker thread (``screen_render_invoke`` -> ``WM_jobs_start`` ->
  ``render_startjob`` -> ``RE_RenderFrame``/``RE_RenderAnim``, which call the
  render_init/render_pre handlers from that thread), where no GPU context of
  ours is bound.  The handler therefore hands the frame to the main thread
  and waits: a ``bpy.app.timers`` function renders the layer there, because
  ``wm_event_do_notifiers`` runs timers on the main thread inside
  ``GPU_render_begin/end`` on every pass of the event loop, also while a
  render job runs and the interface is locked.  This path is read from
  Blender's source (editors/render/render_internal.cc, windowmanager/intern/
  wm_event_system.cc); it could not be run here (no display).
* Not in the compositor: Blender 5.2 has no Python compositor nodes, and the
  render's depth pass is only known after the frame, too late for the splat's
  own depth test.  The compositor compares depths instead (per pixel, with
  the nearest particle's depth).
"""

from __future__ import annotations

import queue
import threading

import bpy
from bpy.app.handlers import persistent
from bpy.props import BoolProperty, StringProperty

from ..engine.settings import SettingsError
from ..hosts.base import GPUMemoryError, NoGPUError, ShaderCompileError
from ..properties import register_factory, scene_effects
from . import compositor_nodes
from .render_layer import ParticleLayer, free_scratch, layer_files

MAIN_THREAD_WAIT = 600.0  # seconds a render thread waits for the main thread's layer before giving up
DRAIN_INTERVAL = 0.05  # seconds between the main thread's looks for work from a render thread


class GPU_PARTICLES_PG_output(bpy.types.PropertyGroup):
    """Where baked frames and render layers go (never the render's own output path)."""

    bake_path: StringProperty(
        name="Bake Output", default="//particles/", subtype="FILE_PATH", options={"PATH_SUPPORTS_BLEND_RELATIVE"},
        description="Folder and name of baked frames ('#' is the frame number), apart from the render output")
    layer_path: StringProperty(
        name="Render Layer", default="//particles/layer/", subtype="DIR_PATH", options={"PATH_SUPPORTS_BLEND_RELATIVE"},
        description="Folder of the particle layer written for each rendered frame (light and depth EXR), "
                    "which the compositor reads; also for compositing elsewhere")
    use_render: BoolProperty(
        name="Composite into Renders", default=True,
        description="Render the particles for every frame Blender renders and lay them over it in the compositor")


def wants_particles(scene) -> bool:
    return scene.gpu_particles_output.use_render and bool(scene_effects(scene)) and scene.camera is not None


class _Session:
    """The layer renderer of the render in progress (one scene), built on its first frame."""

    layer: ParticleLayer | None = None
    errors: list[str] = []


_session = _Session()
_requests: queue.Queue = queue.Queue()


def _on_main_thread(work):
    """Run ``work()`` on the main thread and return its result (directly when already there)."""
    if threading.current_thread() is threading.main_thread():
        return work()
    done = threading.Event()
    box = {}

    def run():
        try:
            box["result"] = work()
        except BaseException as error:  # handed back to the render thread
            box["error"] = error
        done.set()

    _requests.put(run)  # _drain picks it up: registering a timer is not safe off the main thread
    if not done.wait(MAIN_THREAD_WAIT):
        raise TimeoutError(f"the main thread did not render the particle layer within {MAIN_THREAD_WAIT:.0f} s")
    if "error" in box:
        raise box["error"]
    return box.get("result")


def _drain():
    """The main thread's side of :func:`_on_main_thread`, polled by a timer (GUI only: timers never run in -b)."""
    while not _requests.empty():
        _requests.get()()
    return DRAIN_INTERVAL


def _prepare(scene) -> None:
    _free()
    _session.errors = []
    compositor_nodes.ensure_compositing(scene)


def _free() -> None:
    """Drop the layer renderer: on the main thread, where its GPU textures were made."""
    _session.layer = None
    free_scratch()


def _render_frame(scene) -> None:
    if _session.layer is None or _session.layer.scene != scene:
        _session.layer = ParticleLayer(scene)
    frame = scene.frame_current
    light, depth = _session.layer.write(frame)
    compositor_nodes.point_at(scene, str(light), str(depth))
    if scene.frame_current != frame:  # the simulation may have stepped the scene through earlier frames
        scene.frame_set(frame)


def _report(scene, error: Exception) -> None:
    """A failed layer never fails the render: the frame renders without particles and says why."""
    message = f"GPU Particles: frame {scene.frame_current} rendered without particles: {error}"
    _session.errors.append(message)
    print(message)


@persistent
def on_render_init(scene, *_):
    if wants_particles(scene):
        _on_main_thread(lambda: _prepare(scene))


@persistent
def on_render_pre(scene, *_):
    if not wants_particles(scene):
        return
    try:
        _on_main_thread(lambda: _render_frame(scene))
    except (SettingsError, NoGPUError, GPUMemoryError, ShaderCompileError, OSError, RuntimeError, ValueError,
            TimeoutError) as error:
        _report(scene, error)


@persistent
def on_render_end(scene, *_):
    """Free the GPU side once the render is complete or cancelled."""
    if _session.layer is not None:
        _on_main_thread(_free)


class GPU_PARTICLES_OT_setup_compositing(bpy.types.Operator):
    """Add (or repair) the compositor nodes that lay the particles over the render"""

    bl_idname = "gpu_particles.setup_compositing"
    bl_label = "Set Up Compositing"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        scene = context.scene
        tree = compositor_nodes.ensure_compositing(scene, repair=True)
        first = layer_files(scene, scene.frame_current)
        compositor_nodes.point_at(scene, str(first[0]), str(first[1]))
        self.report({"INFO"}, f"Particle nodes are in the compositing tree '{tree.name}'")
        return {"FINISHED"}


def draw_settings(layout, scene) -> None:
    """The output settings in the panel's Render & Bake section."""
    output = scene.gpu_particles_output
    layout.prop(output, "bake_path")
    layout.prop(output, "use_render")
    column = layout.column()
    column.active = output.use_render
    column.prop(output, "layer_path")
    column.operator(GPU_PARTICLES_OT_setup_compositing.bl_idname, icon="NODE_COMPOSITING")


CLASSES = (GPU_PARTICLES_PG_output, GPU_PARTICLES_OT_setup_compositing)
_register_classes, _unregister_classes = register_factory(
    CLASSES, ((bpy.types.Scene, "gpu_particles_output", GPU_PARTICLES_PG_output),))
_HANDLERS = (("render_init", on_render_init), ("render_pre", on_render_pre),
             ("render_complete", on_render_end), ("render_cancel", on_render_end))


def register():
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
