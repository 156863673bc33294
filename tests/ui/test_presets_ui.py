"""Shipped presets bake headless; user presets save, load and refuse bad files like Blender's preset menus."""

import dataclasses
import json

import bpy
import numpy as np
import pytest

from addon.engine.settings.presets import FORMAT_VERSION, load_preset, preset_names
from addon.properties import effect_settings_of, render_settings_of
from addon.scene.renderer import SceneRenderer
from addon.ui import operators
from tests.conftest import add_effect

LOOKS = ("fire", "smoke", "explosion", "fountain", "galaxy_vortex", "snow", "embers", "magic_dust")


def test_every_look_is_shipped():
    assert set(LOOKS) | {"default"} <= set(preset_names())
    descriptions = {load_preset(name).description for name in preset_names()}
    assert len(descriptions) == len(preset_names()), "each preset says what it looks like"


def test_every_preset_bakes_a_distinct_frame(scene):
    """Each preset at a reduced count: particles visible, no Emax overflow, unlike every other preset."""
    emitter = bpy.context.active_object
    frames = {}
    for name in preset_names():
        emitter.gpu_particles.effects.clear()
        bpy.ops.gpu_particles.add(preset=name)
        effect = emitter.gpu_particles.active_effect
        effect.count = min(effect.count, 3000)
        renderer = SceneRenderer(scene, 48, 27)
        frames[name] = renderer.render(3)
        assert frames[name][..., :3].max() > 0.01, f"{name} shows particles"
        assert renderer.frame_stats.overflow == 0, name
    names = list(frames)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            assert not np.allclose(frames[a], frames[b], atol=1e-3), f"{a} and {b} look the same"


def test_user_preset_round_trip(scene, user_dir):
    effect = add_effect(count=1234, seed=77, drag=0.7, color_start=(0.1, 0.2, 0.3), emission="BURST")
    scene.gpu_particles.emax = 3.5
    saved_effect, saved_render = effect_settings_of(effect), render_settings_of(scene)
    assert bpy.ops.gpu_particles.save_preset(name="My Look!") == {"FINISHED"}
    assert (user_dir / "my_look.json").is_file()
    effect.count, effect.seed, effect.emission = 99, 1, "CONTINUOUS"
    scene.gpu_particles.emax = 8.0
    assert bpy.ops.gpu_particles.apply_preset(preset="my_look") == {"FINISHED"}
    assert effect_settings_of(effect) == saved_effect
    assert render_settings_of(scene) == saved_render
    shipped, user = operators.preset_entries()
    assert ("my_look", "My Look!") in user and "my_look" not in dict(shipped)


def test_save_refuses_shipped_names_and_silent_overwrites(scene, user_dir):
    add_effect()
    with pytest.raises(RuntimeError, match="shipped preset"):
        bpy.ops.gpu_particles.save_preset(name="Fire")
    bpy.ops.gpu_particles.save_preset(name="mine")
    with pytest.raises(RuntimeError, match="enable Overwrite"):
        bpy.ops.gpu_particles.save_preset(name="mine")
    assert bpy.ops.gpu_particles.save_preset(name="mine", overwrite=True) == {"FINISHED"}
    assert bpy.ops.gpu_particles.remove_preset(preset="mine") == {"FINISHED"}
    assert not (user_dir / "mine.json").exists()


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "not readable JSON"),
        ("[1, 2]", "must be a JSON object"),
        (json.dumps({"effect": {}}), "no valid format_version"),
        (json.dumps({"format_version": FORMAT_VERSION + 1, "effect": {}}), "newer than this GPU Particles reads"),
        (json.dumps({"format_version": 1, "effect": {"count": 2.5}}), "count must be a whole number"),
        (json.dumps({"format_version": 1, "effect": {"warp_drive": 1}}), "unknown effect setting"),
        (json.dumps({"format_version": 1, "render": {"emax": float("nan")}}), "emax must be finite"),
    ],
)
def test_bad_preset_is_refused_and_changes_nothing(scene, user_dir, content, message):
    effect = add_effect(count=777, seed=5)
    before = effect_settings_of(effect), render_settings_of(scene)
    (user_dir / "broken.json").write_text(content)
    with pytest.raises(RuntimeError, match=message):
        bpy.ops.gpu_particles.apply_preset(preset="broken")
    with pytest.raises(RuntimeError, match=message):
        bpy.ops.gpu_particles.apply_preset(filepath=str(user_dir / "broken.json"))
    assert (effect_settings_of(effect), render_settings_of(scene)) == before


def test_unknown_preset_names_the_known_ones(scene, user_dir):
    add_effect()
    with pytest.raises(RuntimeError, match="known presets: .*fire"):
        bpy.ops.gpu_particles.apply_preset(preset="nope")


def fields_of(settings) -> dict:
    """The settings' fields by name (``vars`` would also hold the hash a dispatch cached on them: kernels.hash_once)."""
    return {field.name: getattr(settings, field.name) for field in dataclasses.fields(settings)}


def test_add_without_a_preset_starts_from_the_default(scene, user_dir):
    bpy.ops.gpu_particles.add()
    effect = bpy.context.active_object.gpu_particles.active_effect
    got, want = (fields_of(effect_settings_of(effect)), fields_of(load_preset("default").effect))
    assert got.keys() == want.keys()
    for name, value in want.items():
        assert got[name] == (value if isinstance(value, str) else pytest.approx(value, rel=1e-6)), name


def test_adding_a_preset_from_the_panel_adds_the_force_fields_its_look_needs(scene, user_dir):
    """galaxy_vortex swirls from its stage's fields: Add places them around the emitter (once), and the
    emitter stays the active, selected object."""
    from addon.scene.inputs import force_fields

    emitter = bpy.context.view_layer.objects.active
    emitter.location = (2.0, 1.0, 0.5)
    bpy.context.view_layer.update()
    bpy.ops.gpu_particles.add(preset="galaxy_vortex")
    fields, warnings = force_fields(scene)
    assert not warnings and sorted(f.type for f in fields) == ["FORCE", "VORTEX"]
    assert all(tuple(f.position) == pytest.approx((2.0, 1.0, 0.5)) for f in fields)
    assert bpy.context.view_layer.objects.active == emitter and emitter.select_get()
    bpy.ops.gpu_particles.add(preset="galaxy_vortex")
    bpy.ops.gpu_particles.add(preset="default")
    assert len(force_fields(scene)[0]) == 2, "the scene's own fields are kept: none added again"


@pytest.mark.parametrize("interaction, loaded", [("FLUID", (7, 0.3)), ("GRANULAR", (12, 0.9))])
def test_an_old_files_fluid_iterations_and_cohesion_load_into_iterations_and_cohesion(scene, tmp_path, interaction,
                                                                                       loaded):
    """A .blend saved before the two settings became one: the fluid's stored values (ID properties no property
    reads now) go to Iterations and Cohesion where the effect is a fluid; a granular effect keeps its own."""
    effect = add_effect(interaction=interaction, iterations=12, cohesion=0.9)
    effect["fluid_iterations"], effect["fluid_cohesion"] = 7, 0.3
    emitter = effect.id_data.name
    path = tmp_path / "old.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.open_mainfile(filepath=str(path), load_ui=False)
    loaded_effect = bpy.data.objects[emitter].gpu_particles.active_effect
    assert (loaded_effect.iterations, loaded_effect.cohesion) == pytest.approx(loaded)
    assert "fluid_iterations" not in loaded_effect and "fluid_cohesion" not in loaded_effect
