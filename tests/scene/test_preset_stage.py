"""Presets' stages: the command line's scene turns on Blender's own motion blur and depth of field."""

import pytest

from addon.cli import build_scene
from addon.engine.settings.presets import Preset, load_preset, preset_names
from addon.engine.settings.settings import effect_settings, render_settings


def stage_preset(stage):
    return Preset("staged", "Staged", "", effect_settings(), render_settings(), stage)


def test_stage_sets_blenders_motion_blur_and_dof(tmp_path):
    stage = {"motion_blur": {"shutter": 0.35}, "camera": {"location": [0, -5, 1], "dof": {"fstop": 2.0,
                                                                                        "focus_distance": 4.5}}}
    scene, _ = build_scene(stage_preset(stage), (1, 2), (32, 18), tmp_path)
    assert scene.render.use_motion_blur and scene.render.motion_blur_shutter == pytest.approx(0.35)
    dof = scene.camera.data.dof
    assert dof.use_dof and dof.aperture_fstop == pytest.approx(2.0) and dof.focus_distance == pytest.approx(4.5)


def test_stage_can_focus_on_the_emitter_and_leaves_both_off_without_them(tmp_path):
    scene, emitter = build_scene(stage_preset({"camera": {"dof": {"fstop": 4.0, "focus_on_emitter": True}}}),
                                 (1, 2), (32, 18), tmp_path)
    assert scene.camera.data.dof.focus_object == emitter and not scene.render.use_motion_blur
    scene, _ = build_scene(stage_preset({}), (1, 2), (32, 18), tmp_path)
    assert not scene.render.use_motion_blur and not scene.camera.data.dof.use_dof


def test_stage_places_force_fields_and_shapes_the_emitter(tmp_path):
    import bpy

    from addon.scene.inputs import force_fields

    stage = {"emitter": {"scale": [1.0, 0.1, 0.05]}, "fields": [
        {"type": "VORTEX", "strength": 6.0, "falloff_power": 1.5},
        {"type": "FORCE", "strength": -2.0, "falloff_power": 0.5, "location": [0, 0, 1]}]}
    scene, emitter = build_scene(stage_preset(stage), (1, 2), (32, 18), tmp_path)
    assert tuple(emitter.scale) == pytest.approx((1.0, 0.1, 0.05))
    assert bpy.context.view_layer.objects.active == emitter, "the effect goes on the emitter, not a field"
    fields, warnings = force_fields(scene)
    assert not warnings
    found = {f.type: f for f in fields}
    assert sorted(found) == ["FORCE", "VORTEX"] and len(fields) == 2
    assert (found["VORTEX"].strength, found["VORTEX"].falloff_power) == pytest.approx((6.0, 1.5))
    assert (found["FORCE"].strength, found["FORCE"].falloff_power) == pytest.approx((-2.0, 0.5))
    assert found["FORCE"].position == pytest.approx((0, 0, 1)) and found["VORTEX"].axis == pytest.approx((0, 0, 1))
    scene, emitter = build_scene(stage_preset({}), (1, 2), (32, 18), tmp_path)
    assert force_fields(scene) == ([], []) and tuple(emitter.scale) == (1, 1, 1)


@pytest.mark.parametrize("name", preset_names())
def test_every_shipped_stage_builds(name, tmp_path):
    preset = load_preset(name)
    scene, _ = build_scene(preset, (1, 2), (32, 18), tmp_path)
    assert scene.render.use_motion_blur == ("motion_blur" in preset.stage)
    assert scene.camera.data.dof.use_dof == ("dof" in preset.stage.get("camera", {}))


def test_an_orbit_is_the_same_path_whatever_frames_a_run_bakes(tmp_path):
    """The comet baked alone at frame 30 has its emitter where frame 30 of the whole shot has it (it was at the
    orbit's start, angle 0, on whichever frame a run began)."""
    comet = load_preset("comet")

    def path(frames, at):
        scene, emitter = build_scene(comet, frames, (32, 18), tmp_path)
        located = []
        for frame in at:
            scene.frame_set(frame)
            located.extend(emitter.matrix_world.translation)
        return located

    assert path((30, 30), [30, 29]) == pytest.approx(path((1, 60), [30, 29]))
    assert path((30, 30), [30]) != pytest.approx(path((1, 60), [1]))
