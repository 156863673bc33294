"""Blender's own settings drive the footprints: the scene's motion blur, the camera's depth of field, the point filter."""

import numpy as np
import pytest

from addon.engine.draw.footprint import SPLAT_MAX_RADIUS, Focus
from addon.scene.renderer import SceneRenderer, camera_of, lens_summary
from addon.scene.snapshot import scene_seconds_per_frame
from tests.conftest import add_effect

W, H = 64, 36


def frame_energy(frame):
    return frame[..., :3].astype(np.float64).sum()


def animate_camera(scene):
    camera = scene.camera
    start = tuple(camera.location)
    camera.keyframe_insert("location", frame=1)
    camera.location.x += 1.0
    camera.keyframe_insert("location", frame=4)
    camera.location = start


def test_blur_and_focus_off_by_default(scene):
    assert not scene.render.use_motion_blur and not scene.camera.data.dof.use_dof
    camera = camera_of(scene, W, H)
    assert camera.shutter is None and camera.focus is None
    assert lens_summary(scene) == ["Motion blur: off (Render Properties)", "Depth of field: off (Camera Properties)"]


@pytest.mark.parametrize("position, first", [("CENTER", -0.25), ("START", 0.0), ("END", -0.5)])
def test_shutter_is_blenders_with_the_camera_at_open_and_close(scene, position, first):
    add_effect(count=100)
    animate_camera(scene)
    scene.render.use_motion_blur = True
    scene.render.motion_blur_shutter = 0.5
    scene.render.motion_blur_position = position
    renderer = SceneRenderer(scene, W, H)
    scene.frame_set(2)
    camera = camera_of(scene, W, H, renderer._camera_matrix_at)
    assert scene.frame_current == 2 and scene.frame_subframe == 0.0, "the scene is back at its frame"
    seconds = scene_seconds_per_frame(scene)
    assert camera.shutter.open == pytest.approx(first * seconds)
    assert camera.shutter.close == pytest.approx((first + 0.5) * seconds)
    for frames, view_proj in ((first, camera.shutter.view_proj_open), (first + 0.5, camera.shutter.view_proj_close)):
        scene.frame_set(1, subframe=1.0 + frames) if frames < 0 else scene.frame_set(2, subframe=frames)
        expected = camera_of(scene, W, H).view_proj
        np.testing.assert_allclose(view_proj, expected, atol=1e-6)
    assert "Motion blur: shutter 0.50 frames" in lens_summary(scene)[0]


def test_depth_of_field_is_the_cameras(scene):
    lens = scene.camera.data
    lens.dof.use_dof = True
    lens.dof.aperture_fstop = 2.8
    lens.dof.focus_distance = 7.0
    focus = camera_of(scene, W, H).focus
    # Sensor fit AUTO: the sensor width spans the target's wider side.
    expected = Focus.thin_lens(lens.lens, 2.8, 7.0, W / lens.sensor_width)
    assert focus.distance == pytest.approx(7.0)
    assert focus.scale_px == pytest.approx(expected.scale_px, rel=1e-5)
    assert lens_summary(scene)[1] == "Depth of field: f/2.8 at 7 m"

    import bpy

    target = bpy.data.objects.new("Focus", None)
    scene.collection.objects.link(target)
    target.location = scene.camera.location
    target.location.y += 4.0  # the camera looks along +y, slightly down
    lens.dof.focus_object = target
    bpy.context.view_layer.update()
    view_axis = -np.array(scene.camera.matrix_world)[:3, 2]
    assert camera_of(scene, W, H).focus.distance == pytest.approx(4.0 * view_axis[1] / np.linalg.norm(view_axis))
    lens.type = "ORTHO"
    assert camera_of(scene, W, H).focus is None


@pytest.mark.parametrize("what", ["motion", "focus"])
def test_bake_with_blur_keeps_the_frames_energy_and_off_is_unchanged(scene, what):
    add_effect(count=20_000, emission_strength=1.0)
    off = SceneRenderer(scene, W, H).render(3)
    np.testing.assert_array_equal(SceneRenderer(scene, W, H).render(3), off)
    if what == "motion":
        scene.render.use_motion_blur = True
        scene.render.motion_blur_shutter = 1.0
    else:
        scene.camera.data.dof.use_dof = True
        scene.camera.data.dof.aperture_fstop = 0.2  # circles of about 2 px at 64x36
        scene.camera.data.dof.focus_distance = 2.0
    on = SceneRenderer(scene, W, H).render(3)
    assert not np.array_equal(on, off)
    assert frame_energy(on) == pytest.approx(frame_energy(off), rel=0.02)


def test_extreme_depth_of_field_keeps_its_light_in_frame_and_what_leaves_is_only_beyond_the_edges(scene):
    """f/0.5 focused at 1 m, the emitter about 7 m away: discs tens of pixels wide.  Rendered again over a
    frame three times as wide and tall at the same pixel scale (the sensor three times as wide), the centre is
    the frame (no in-frame light lost or added) and the whole holds the plain render's light: what the frame
    lacks against the plain one left it past its edges."""
    add_effect(count=20_000, emission_strength=1.0)
    camera = scene.camera
    emitter = next(obj for obj in scene.objects if obj.gpu_particles.effects)
    offset = camera.matrix_world.translation - emitter.matrix_world.translation
    camera.location = emitter.matrix_world.translation + offset.normalized() * 7.0
    lens = camera.data
    lens.sensor_fit = "HORIZONTAL"

    width, height = 480, 270  # the frame: at 64x36 the discs are under a pixel wide

    def render(scale, dof):
        lens.dof.use_dof, lens.dof.aperture_fstop, lens.dof.focus_distance = dof, 0.5, 1.0
        lens.sensor_width = 36.0 * scale
        return SceneRenderer(scene, width * scale, height * scale).render(3)

    plain, wide_plain = render(1, False), render(3, False)
    defocused, wide = render(1, True), render(3, True)
    lens.sensor_width = 36.0
    assert camera_of(scene, width, height).focus.radius_px(7.0) > SPLAT_MAX_RADIUS, "bokeh discs"
    centre = (slice(height, 2 * height), slice(width, 2 * width))
    for whole, frame in ((wide, defocused), (wide_plain, plain)):  # to the splat's fixed point, scaled per frame
        np.testing.assert_allclose(whole[centre], frame, atol=2e-3 * frame.max())
    assert frame_energy(wide) == pytest.approx(frame_energy(wide_plain), rel=0.01), "no light lost"
    assert frame_energy(wide) - frame_energy(wide[centre]) > 0.01 * frame_energy(wide), "light leaves the frame"


def test_point_filter_setting(scene):
    add_effect(count=5000)
    antialiased = SceneRenderer(scene, W, H)
    assert antialiased.compositor.antialias
    scene.gpu_particles.point_filter = "ONE_PIXEL"
    one_pixel = SceneRenderer(scene, W, H)
    assert not one_pixel.compositor.antialias
    a, b = antialiased.render(3), one_pixel.render(3)
    assert np.count_nonzero(a[..., :3].max(axis=-1)) > np.count_nonzero(b[..., :3].max(axis=-1))
    assert frame_energy(a) == pytest.approx(frame_energy(b), rel=0.01)
