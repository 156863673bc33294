"""The GUI path of render integration: render handlers on a worker thread hand the layer to the main thread.

F12 and Render Animation call the render handlers from the render job's thread; the add-on's GPU context is
the main thread's, so the handlers queue their work for ``_drain``, which a ``bpy.app.timers`` timer runs on
the main thread.  Here the handlers run on a ``threading.Thread`` while the main thread calls ``_drain`` as
the timer would; every call into the GPU host records its thread.
"""

import inspect
import threading
import time

import numpy as np
import pytest

from addon.engine.draw.particle_depth import FAR
from addon.hosts.blender import BlenderHost
from addon.output import compositor_nodes, layer_scene, render_integration
from addon.output.render_layer import ParticleLayer
from tests.conftest import add_effect


@pytest.fixture
def gpu_threads(monkeypatch):
    """The thread of every call into the GPU host, in order."""
    threads = []
    for name, method in inspect.getmembers(BlenderHost, inspect.isfunction):
        def recorded(*args, _method=method, **kwargs):
            threads.append(threading.current_thread())
            return _method(*args, **kwargs)
        monkeypatch.setattr(BlenderHost, name, recorded)
    return threads


def on_worker(*handlers):
    """Start a thread that calls ``handlers`` in turn, as a render job's thread calls the render handlers."""
    thread = threading.Thread(target=lambda: [handler() for handler in handlers])
    thread.start()
    return thread


def drain_until_done(thread, limit=120.0):
    """The main thread's event loop: the timer's function, again and again, until the render thread is done."""
    ends = time.monotonic() + limit
    while thread.is_alive():
        assert time.monotonic() < ends, "the render thread never finished"
        render_integration._drain()
        time.sleep(0.001)
    thread.join()


@pytest.fixture
def effect_scene(scene):
    add_effect(count=3000)
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.frame_set(6)
    yield scene
    render_integration._requests.queue.clear()


def handed_depth(scene):
    """The particle depth handed to the scene's helper for its frame (FAR everywhere when none is)."""
    depth = layer_scene.handed(compositor_nodes.helper_of(scene).name, scene.frame_current).get("Depth")
    return np.full(1, FAR) if depth is None else depth.ravel()


def test_the_layer_is_rendered_on_the_main_thread(effect_scene, gpu_threads):
    scene = effect_scene
    worker = on_worker(lambda: render_integration.on_render_init(scene),
                       lambda: render_integration.on_render_pre(scene))
    drain_until_done(worker)
    assert gpu_threads, "the layer was rendered"
    assert {thread.name for thread in gpu_threads} == {threading.main_thread().name}, "no GPU call off the main thread"
    assert (handed_depth(scene) < FAR).sum() > 20, "the frame's layer is handed to the helper scene"
    assert "frame 6's particles" in scene.compositing_node_group.nodes[compositor_nodes.LIGHT].label
    assert not render_integration._session.errors

    worker = on_worker(lambda: render_integration.on_render_complete(scene))
    drain_until_done(worker)
    assert render_integration._session.layer is None, "freed on the main thread"
    assert (handed_depth(scene) == FAR).all(), "withdrawn when the render ends"


def test_a_render_cancelled_while_its_thread_waits(effect_scene, gpu_threads):
    scene = effect_scene
    compositor_nodes.ensure_compositing(scene)
    worker = on_worker(lambda: render_integration.on_render_pre(scene))
    time.sleep(0.1)  # waiting: nobody drains
    assert worker.is_alive() and not render_integration._requests.empty()
    started = time.monotonic()
    render_integration.on_render_cancel(scene)  # ESC: the cancel reaches the handlers
    worker.join(5.0)
    assert not worker.is_alive() and time.monotonic() - started < 1.0, "the wait ends with the render"
    render_integration._drain()
    assert not gpu_threads and render_integration._session.layer is None, "the dropped layer is never rendered"
    assert not render_integration._session.errors, "a cancel is no failure"


def test_waits_are_bounded(effect_scene, monkeypatch, gpu_threads):
    scene = effect_scene
    compositor_nodes.ensure_compositing(scene)
    render_integration.on_render_init(scene)
    monkeypatch.setattr(render_integration, "MAIN_THREAD_WAIT", 0.2)
    worker = on_worker(lambda: render_integration.on_render_pre(scene))  # the main thread never drains
    worker.join(5.0)
    assert not worker.is_alive()
    errors = render_integration._session.errors
    assert len(errors) == 1 and "did not take the particle layer" in errors[0]
    render_integration._drain()
    assert not gpu_threads, "work given up on never runs late"


def test_a_layer_that_raises_reaches_the_artist(effect_scene, monkeypatch):
    scene = effect_scene

    def fails(self, frame):
        raise RuntimeError("shader did not compile")

    monkeypatch.setattr(ParticleLayer, "layer", fails)
    worker = on_worker(lambda: render_integration.on_render_init(scene),
                       lambda: render_integration.on_render_pre(scene),
                       lambda: render_integration.on_render_complete(scene))
    drain_until_done(worker)
    errors = render_integration.last_errors[scene.name]
    assert len(errors) == 1 and "frame 6" in errors[0] and "shader did not compile" in errors[0]
    assert "shader did not compile" in scene.compositing_node_group.nodes[compositor_nodes.LIGHT].label
