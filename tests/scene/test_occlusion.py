"""Scene depth in the add-on: particles behind a cube are hidden in the bake; camera errors."""

import bpy
import numpy as np
import pytest

from addon.engine.draw.compositing import Compositor
from addon.engine.settings.settings import SettingsError
from addon.scene.renderer import SceneRenderer
from tests.conftest import add_effect


def add_cube(location, size):
    mesh = bpy.data.meshes.new("Cube")
    half = size / 2
    corners = [(x, y, z) for x in (-half, half) for y in (-half, half) for z in (-half, half)]
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    mesh.from_pydata(corners, [], faces)
    cube = bpy.data.objects.new("Cube", mesh)
    cube.location = location
    bpy.context.scene.collection.objects.link(cube)
    return cube


def particle_light(scene, occlusion="SCENE", point_mode="ATOMIC", particle_type="POINT"):
    scene.gpu_particles.occlusion = occlusion
    scene.gpu_particles.point_mode = point_mode
    bpy.context.active_object.gpu_particles.effects[0].particle_type = particle_type
    renderer = SceneRenderer(scene, 64, 36)
    frame = renderer.render(2)
    half = frame.shape[1] // 2
    return frame[:, :half, :3].sum(), frame[:, half:, :3].sum()


@pytest.mark.parametrize("point_mode, particle_type", [("ATOMIC", "POINT"), ("GL_POINTS", "POINT"),
                                                       ("ATOMIC", "SPRITE")])
def test_particles_behind_a_cube_are_hidden(scene, point_mode, particle_type):
    add_effect(count=20_000)
    emitter = bpy.context.active_object
    left_open, right_open = particle_light(scene, "SCENE", point_mode, particle_type)
    assert left_open > 0 and right_open > 0
    # A cube between camera and emitter covering the right half of the view (camera at y = -12 looks along +y).
    add_cube((2.5, -6.0, 1.5), 5.0)
    bpy.context.view_layer.objects.active = emitter
    left, right = particle_light(scene, "SCENE", point_mode, particle_type)
    assert right == 0, "hidden behind the cube"
    assert left == pytest.approx(left_open, rel=1e-6)
    left_none, right_none = particle_light(scene, "NONE", point_mode, particle_type)
    assert right_none == pytest.approx(right_open, rel=1e-6), "without occlusion the cube hides nothing"


def test_particles_in_front_of_a_cube_stay(scene):
    add_effect(count=20_000)
    emitter = bpy.context.active_object
    before = sum(particle_light(scene))
    add_cube((0.0, 8.0, 1.5), 6.0)  # behind the emitter
    bpy.context.view_layer.objects.active = emitter
    assert sum(particle_light(scene)) == pytest.approx(before, rel=1e-6)


def test_one_renderer_follows_an_occluder_that_moves(scene):
    """The pre-pass draws again only when the occluders or the view changed: a cube moved between two
    renders of one frame hides the other half; moved back, the first half again."""
    add_effect(count=20_000)
    emitter = bpy.context.active_object
    cube = add_cube((2.5, -6.0, 1.5), 5.0)  # the right half of the view
    bpy.context.view_layer.objects.active = emitter
    renderer = SceneRenderer(scene, 64, 36)

    def halves():
        frame = renderer.render(2)
        half = frame.shape[1] // 2
        return frame[:, :half, :3].sum(), frame[:, half:, :3].sum()

    right_hidden = halves()
    assert right_hidden[0] > 0 and right_hidden[1] == 0
    assert halves() == right_hidden, "drawn again as it was"
    cube.location.x = -2.5
    bpy.context.view_layer.update()
    left_hidden = halves()
    assert left_hidden[0] == 0 and left_hidden[1] > 0
    cube.location.x = 2.5
    bpy.context.view_layer.update()
    assert halves() == right_hidden


@pytest.mark.parametrize("breakage, message", [
    ("orthographic_zero", "orthographic scale"),
    ("zero_scale", "scaled to zero"),
    ("not_a_camera", "not a camera"),
])
def test_unusable_cameras_are_refused(scene, breakage, message):
    add_effect()
    camera = scene.camera
    if breakage == "orthographic_zero":
        camera.data.type = "ORTHO"
        camera.data.ortho_scale = 0.0
    elif breakage == "zero_scale":
        camera.scale = (0.0, 0.0, 0.0)
        bpy.context.view_layer.update()
    else:
        scene.camera = bpy.context.active_object
    with pytest.raises(SettingsError, match=message):
        SceneRenderer(scene, 16, 16).render(1)
    with pytest.raises(RuntimeError, match=message):
        bpy.ops.gpu_particles.bake()
    assert np.isfinite(camera.location).all()


@pytest.mark.parametrize("readback", ["blender-read", "pixel-pack"])
def test_bake_reports_overflow_and_auto_emax_follows_the_frames(scene, tmp_path, monkeypatch, readback):
    """The overflow counter reaches the user (operator warning, sidecar); AUTO Emax grows out of it.
    With GL pixel-pack readback (forced on here, llvmpipe) MANUAL frames' overflows are read a frame late,
    with the frame: each frame still reports its own."""
    import json

    from addon.hosts import gl_readback

    add_effect(count=20_000)
    scene.gpu_particles.emax = 1e-3  # far too low: every busy pixel overflows
    scene.gpu_particles.emax_mode = "MANUAL"
    assert bpy.ops.gpu_particles.bake() == {"FINISHED"}
    record = json.loads((tmp_path / "frames" / "gpu_particles_bake.json").read_text())
    assert set(record["overflow"]) == {"1", "2", "3", "4"} and min(record["overflow"].values()) > 0
    assert record["emax"] == [pytest.approx(1e-3)] * 4
    if readback == "pixel-pack":
        monkeypatch.delenv(gl_readback.ENVIRONMENT, raising=False)
        monkeypatch.setattr(gl_readback, "software", lambda renderer: False)
        scene.gpu_particles.emax = 0.02  # fewer overflows, a different count each frame
        stored = []
        monkeypatch.setattr(Compositor, "store_stats", lambda self, buffer, store=Compositor.store_stats:
                            stored.append(buffer) or store(self, buffer))
        assert bpy.ops.gpu_particles.bake() == {"FINISHED"}
        late = json.loads((tmp_path / "frames" / "gpu_particles_bake.json").read_text())["overflow"]
        assert len(stored) == 4 and len({id(buffer) for buffer in stored}) == 2, "two stats copies in flight"
        monkeypatch.setattr(gl_readback, "software", lambda renderer: True)
        assert bpy.ops.gpu_particles.bake() == {"FINISHED"}
        assert len(stored) == 4, "Blender's read: the stats are read at once"
        now = json.loads((tmp_path / "frames" / "gpu_particles_bake.json").read_text())["overflow"]
        assert late == now and len(set(now.values())) == 4, "frames of different counts: each reported as its own"

        monkeypatch.setattr(gl_readback, "software", lambda renderer: False)
        frame_buffer = gl_readback.PixelPack.buffer

        def no_small_buffers(pack, texture_format, shape, dtype):  # a driver that maps frames but not the stats
            if shape == (1, 2):
                raise RuntimeError("glMapBufferRange failed")
            return frame_buffer(pack, texture_format, shape, dtype)

        monkeypatch.setattr(gl_readback.PixelPack, "buffer", no_small_buffers)
        assert bpy.ops.gpu_particles.bake() == {"FINISHED"}
        assert len(stored) == 4, "the stats read at once once the host reads through Blender"
        assert json.loads((tmp_path / "frames" / "gpu_particles_bake.json").read_text())["overflow"] == now
        return

    scene.gpu_particles.emax_mode = "AUTO"
    scene.frame_end = 12
    assert bpy.ops.gpu_particles.bake() == {"FINISHED"}
    record = json.loads((tmp_path / "frames" / "gpu_particles_bake.json").read_text())
    assert record["emax"][1] == pytest.approx(4e-3), "fourfold after an overflowing frame"
    overflowing = sorted(int(frame) for frame in record["overflow"])
    assert overflowing == list(range(1, len(overflowing) + 1)) and len(overflowing) < 12, "fits from some frame on"


@pytest.mark.parametrize("lens", ["motion blur", "depth of field"])
def test_a_cube_in_front_of_half_of_wide_footprints_hides_exactly_that_half(scene, lens):
    """Streaks and circles of confusion (bokeh discs too) straddling the cube's edge: the splat tests each of
    their pixels, not the particle's, so the covered half goes dark and the other keeps every pixel."""
    add_effect(count=20_000)
    emitter = bpy.context.active_object
    if lens == "motion blur":
        scene.render.use_motion_blur = True
        scene.render.motion_blur_shutter = 1.0
        emitter.gpu_particles.effects[0].velocity_random = 8.0  # streaks of several pixels at 64x36
    else:
        scene.camera.data.dof.use_dof = True
        scene.camera.data.dof.aperture_fstop = 0.05  # circles of 2 to 12 px at 64x36: splatted and bokeh discs
        scene.camera.data.dof.focus_distance = 3.0
    open_frame = SceneRenderer(scene, 64, 36).render(2)
    add_cube((2.5, -6.0, 1.5), 5.0)
    bpy.context.view_layer.objects.active = emitter
    hidden = SceneRenderer(scene, 64, 36).render(2)
    half = 32
    assert open_frame[:, half:, :3].any() and open_frame[:, :half, :3].any()
    assert not hidden[:, half:, :3].any(), "hidden behind the cube, every pixel of every footprint"
    np.testing.assert_array_equal(hidden[:, :half], open_frame[:, :half])
