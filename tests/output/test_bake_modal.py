"""The interactive bake's modal path driven by a fake event sequence, and the EXR frame format."""

import json
import struct
from types import SimpleNamespace

import bpy
import numpy as np
import pytest

from addon.scene.renderer import SceneRenderer
from addon.ui.operators import GPU_PARTICLES_OT_bake
from tests.conftest import add_effect


class FakeWindowManager:
    """Records what the operator asks of the window manager (there is no window in background mode)."""

    def __init__(self):
        self.calls = []

    def progress_begin(self, low, high):
        self.calls.append(("progress_begin", low, high))

    def progress_update(self, value):
        self.calls.append(("progress_update", value))

    def progress_end(self):
        self.calls.append(("progress_end",))

    def event_timer_add(self, step, window=None):
        self.calls.append(("timer_add",))
        return "timer"

    def event_timer_remove(self, timer):
        self.calls.append(("timer_remove", timer))

    def modal_handler_add(self, operator):
        self.calls.append(("modal_handler_add",))


def fake_operator(operator_class=GPU_PARTICLES_OT_bake):
    """An object carrying an operator's own methods, the bake's by default (bpy operators cannot be instantiated)."""
    own = [c for c in reversed(operator_class.__mro__) if c.__module__.startswith("addon")]
    members = {k: v for c in own for k, v in vars(c).items() if not k.startswith("__")}
    fake = type("FakeBake", (), members)()
    fake.properties = SimpleNamespace(is_property_set=lambda name: False)
    fake.reports = []
    fake.report = lambda kind, message: fake.reports.append((set(kind), message))
    return fake


def run_events(scene, events):
    operator, wm = fake_operator(), FakeWindowManager()
    context = SimpleNamespace(scene=scene, window_manager=wm, window=None)
    results = [operator.invoke(context, SimpleNamespace(type="NONE"))]
    for kind in events:
        results.append(operator.modal(context, SimpleNamespace(type=kind)))
    return operator, wm, results


def listing(folder):
    return sorted(p.name for p in folder.iterdir())


def test_escape_mid_bake_leaves_only_complete_frames(scene, tmp_path):
    add_effect(count=3000)
    operator, wm, results = run_events(scene, ["TIMER", "MOUSEMOVE", "TIMER", "ESC"])
    assert results == [{"RUNNING_MODAL"}, {"RUNNING_MODAL"}, {"PASS_THROUGH"}, {"RUNNING_MODAL"}, {"CANCELLED"}]
    folder = tmp_path / "frames"
    assert listing(folder) == ["f_0001.png", "f_0002.png", "gpu_particles_bake.json"]  # no partial files
    for name in ("f_0001.png", "f_0002.png"):
        assert tuple(bpy.data.images.load(str(folder / name)).size) == (64, 36)
    record = json.loads((folder / "gpu_particles_bake.json").read_text())
    assert record["cancelled"] is True and record["files"] == ["f_0001.png", "f_0002.png"]
    assert ("progress_update", 1) in wm.calls and ("progress_update", 2) in wm.calls
    assert wm.calls[-2:] == [("timer_remove", "timer"), ("progress_end",)]
    assert any("Cancelled after 2 frame(s)" in message for _, message in operator.reports)
    assert "GPU Particles Bake" not in bpy.data.images, "the scratch image is freed"


def test_modal_bake_runs_to_the_end(scene, tmp_path):
    add_effect(count=3000)
    _, wm, results = run_events(scene, ["TIMER"] * 4)
    assert results[-1] == {"FINISHED"} and results[1:-1] == [{"RUNNING_MODAL"}] * 3
    assert listing(tmp_path / "frames") == [f"f_{n:04d}.png" for n in range(1, 5)] + ["gpu_particles_bake.json"]
    assert [c[1] for c in wm.calls if c[0] == "progress_update"] == [1, 2, 3, 4]


def test_modal_bake_refuses_before_any_frame(scene, tmp_path):
    add_effect(count=3000)
    scene.camera = None
    operator, wm, results = run_events(scene, [])
    assert results == [{"CANCELLED"}]
    assert wm.calls == [] and not (tmp_path / "frames").exists()
    assert any("no camera" in message for _, message in operator.reports)


def exr_channels(path):
    """(name, pixel type) of every channel in an OpenEXR header; pixel type 1 is HALF, 2 is FLOAT."""
    data = path.read_bytes()
    assert data[:4] == b"\x76\x2f\x31\x01", "OpenEXR magic"
    offset = 8
    while data[offset] != 0:
        name_end = data.index(b"\0", offset)
        kind_end = data.index(b"\0", name_end + 1)
        size = struct.unpack_from("<i", data, kind_end + 1)[0]
        value = data[kind_end + 5: kind_end + 5 + size]
        if data[offset:name_end] == b"channels":
            channels, at = [], 0
            while value[at] != 0:
                end = value.index(b"\0", at)
                channels.append((value[at:end].decode(), struct.unpack_from("<i", value, end + 1)[0]))
                at = end + 1 + 16
            return channels
        offset = kind_end + 5 + size
    raise AssertionError("no channels attribute")


def test_exr_frames_are_half_float_rgba_and_linear(scene, tmp_path):
    add_effect(count=20_000)
    settings = scene.render.image_settings
    settings.file_format = "OPEN_EXR"
    settings.color_mode, settings.color_depth = "RGB", "32"  # the bake writes half RGBA anyway
    scene.frame_end = 2
    assert bpy.ops.gpu_particles.bake() == {"FINISHED"}
    path = tmp_path / "frames" / "f_0002.exr"
    assert sorted(exr_channels(path)) == [("A", 1), ("B", 1), ("G", 1), ("R", 1)]
    assert (settings.color_mode, settings.color_depth) == ("RGB", "32"), "the scene's settings are restored"
    written = np.array(bpy.data.images.load(str(path)).pixels[:], dtype=np.float32).reshape(36, 64, 4)
    expected = SceneRenderer(scene, 64, 36).render(2)
    assert expected[..., :3].max() > 0.05
    np.testing.assert_allclose(written, expected.astype(np.float16).astype(np.float32), rtol=2e-3, atol=1e-6)


@pytest.mark.parametrize("file_format", ["PNG", "OPEN_EXR"])
def test_png_and_exr_frames_are_named_by_format(scene, tmp_path, file_format):
    add_effect(count=2000)
    scene.render.image_settings.file_format = file_format
    scene.frame_end = 1
    assert bpy.ops.gpu_particles.bake() == {"FINISHED"}
    suffix = ".png" if file_format == "PNG" else ".exr"
    assert listing(tmp_path / "frames") == [f"f_0001{suffix}", "gpu_particles_bake.json"]


def test_unsupported_format_reports_before_writing(scene, tmp_path):
    add_effect(count=2000)
    scene.render.image_settings.file_format = "JPEG"
    with pytest.raises(RuntimeError, match="JPEG is not supported"):
        bpy.ops.gpu_particles.bake()
    assert not (tmp_path / "frames").exists()
