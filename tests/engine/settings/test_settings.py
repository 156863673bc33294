"""Pure-Python tests of settings, presets and the command line's parsing (no GPU)."""

import json

import pytest

from addon.cli import UsageError, parse_frames, parse_resolution
from addon.engine.settings.presets import (
    FORMAT_VERSION,
    PresetError,
    load_preset,
    parse_preset,
    preset_names,
    write_preset,
)
from addon.engine.settings.settings import (
    EFFECT_FIELDS,
    HARD_MAX_PARTICLES,
    RENDER_FIELDS,
    SettingsError,
    check_for_gpu,
    clamped,
    effect_settings,
    max_particles,
    render_settings,
)


def test_defaults_are_valid_and_complete():
    s = effect_settings()
    assert {f.name for f in EFFECT_FIELDS} == set(vars(s))
    for field in EFFECT_FIELDS:
        assert getattr(s, field.name) == (tuple(field.default) if isinstance(field.default, tuple) else field.default)


@pytest.mark.parametrize(
    "values, message",
    [
        ({"count": -5}, "count must be at least 1"),
        ({"count": 0}, "count must be at least 1"),
        ({"count": 10**12}, f"count must be at most {HARD_MAX_PARTICLES:,}"),
        ({"count": 2.5}, "whole number"),
        ({"lifetime": 0}, "lifetime must be at least"),
        ({"lifetime": -1}, "lifetime must be at least"),
        ({"size": 0}, "size must be at least"),
        ({"drag": float("nan")}, "drag must be finite"),
        ({"gravity": (0, 0)}, "gravity must be three numbers"),
        ({"emitter_shape": "CUBE"}, "emitter_shape must be one of POINT, SPHERE"),
        ({"turbulence": 1}, "unknown effect setting 'turbulence'"),
        ({"count": True}, "count must be a number"),
    ],
)
def test_bad_settings_are_refused_with_the_reason(values, message):
    with pytest.raises(SettingsError, match=message):
        effect_settings(values)


@pytest.mark.parametrize("values, clamp", [
    ({"spawn_count": 0}, "Spawn Count 0 raised to 1"),
    ({"spawn_count": 1_000_000}, "Spawn Count 1,000,000 lowered to 4,096"),
    ({"flipbook_columns": 0}, "Flipbook Columns 0 raised to 1"),
    ({"trail_points": 65}, "Trail Points 65 lowered to 64"),
    ({"lifetime": 0.0}, "Lifetime 0 raised to 0.001"),
    ({"emitter_scale": (-1.0, 1.0, 2e4)}, "Emitter Scale (-1, 1, 20,000) clamped to (0, 1, 10,000)"),
])
def test_numbers_past_their_bounds_are_clamped_saying_from_what_to_what(values, clamp):
    fixed, said = clamped(EFFECT_FIELDS, values)
    assert said == (clamp,)
    settings = effect_settings(fixed)  # valid once clamped
    name = next(iter(values))
    field = next(f for f in EFFECT_FIELDS if f.name == name)
    assert all(field.min <= part <= field.max for part in (getattr(settings, name) if field.kind == "vec3"
                                                           else (getattr(settings, name),)))


def test_clamping_leaves_values_in_bounds_and_what_only_validation_can_name():
    values = {"lifetime_random": 0.99900001, "seed": 5, "sprite_image": "x", "count": float("nan"), "drag": "much",
              "size": float("inf"), "substeps": "0", "velocity": (1, "up", 3)}
    assert clamped(EFFECT_FIELDS, values) == (values, ())  # float32's 0.999 is the bound itself
    assert clamped(RENDER_FIELDS, {"emax": -1.0})[1] == ("Emax -1 raised to 1e-06",)


def test_all_problems_reported_at_once():
    with pytest.raises(SettingsError) as error:
        effect_settings({"count": -1, "lifetime": -1})
    assert "count" in str(error.value) and "lifetime" in str(error.value)


def test_render_settings_refuse_non_positive_emax():
    with pytest.raises(SettingsError, match="emax"):
        render_settings({"emax": 0})


def test_gpu_limit_names_the_maximum():
    assert max_particles(1024) == 1024 * 1024
    with pytest.raises(SettingsError, match="at most 1,048,576 particles"):
        check_for_gpu(effect_settings({"count": 1024 * 1024 + 1}), 1024)


def test_shipped_presets_load():
    assert "default" in preset_names()
    for name in preset_names():
        preset = load_preset(name)
        assert preset.label and preset.effect.count > 0


def test_unknown_preset_lists_known_ones():
    with pytest.raises(PresetError, match="known presets: .*default"):
        load_preset("no_such_preset")


def test_preset_round_trip(tmp_path):
    original = load_preset("default")
    write_preset(tmp_path / "mine.json", "Mine", original.effect, original.render)
    again = parse_preset(tmp_path / "mine.json")
    assert again.effect == original.effect and again.render == original.render


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "not readable JSON"),
        ("[1, 2]", "must be a JSON object"),
        (json.dumps({"effect": {}}), "no valid format_version"),
        (json.dumps({"format_version": FORMAT_VERSION + 1}), "newer than this GPU Particles reads"),
        (json.dumps({"format_version": 1, "effect": {"count": "-3"}}), "count must be a number"),
    ],
)
def test_malformed_presets_are_refused(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(PresetError, match=message):
        parse_preset(path)


def test_a_preset_past_the_bounds_holds_them_clamped_and_keeps_them_as_given(tmp_path):
    path = tmp_path / "loud.json"
    path.write_text(json.dumps({"format_version": 1, "label": "Loud", "effect": {"count": -3, "trail_points": 65},
                                "render": {"emax": 0},
                                "spawned": [{"label": "Crackle", "effect": {"spawn_from": "Loud", "spawn_count": 10**6,
                                                                            "emitter_shape": "POINT"}}]}))
    preset = parse_preset(path)
    assert (preset.effect.count, preset.effect.trail_points, preset.render.emax) == (1, 64, 1e-6)
    assert preset.spawned[0][1].spawn_count == 4096
    assert preset.beyond == (("effect", "count", -3), ("effect", "trail_points", 65), ("render", "emax", 0),
                             ("spawned Crackle", "spawn_count", 1_000_000))


def test_frame_and_resolution_parsing():
    assert parse_frames("1-48") == (1, 48)
    assert parse_frames("-5--2") == (-5, -2)
    assert parse_frames("7") == (7, 7) and parse_frames(" -3 ") == (-3, -3)
    with pytest.raises(UsageError, match="FRAMES must look like 1-48"):
        parse_frames("1-")
    assert parse_resolution("960x540") == (960, 540)
    with pytest.raises(UsageError, match="runs backwards"):
        parse_frames("10-1")
    with pytest.raises(UsageError):
        parse_resolution("0x10")
    with pytest.raises(UsageError):
        parse_resolution("wide")


@pytest.mark.parametrize("field", [f for f in EFFECT_FIELDS if f.kind in ("float", "vec3", "color")],
                         ids=lambda f: f.name)
def test_every_bound_as_blender_stores_it_is_accepted(field):
    """A slider dragged to its limit holds the float32 nearest the bound, which may lie past it in float64."""
    import numpy as np

    for bound in (field.min, field.max):
        stored = float(np.float32(bound))
        value = (stored,) * 3 if field.kind in ("vec3", "color") else stored
        settings = effect_settings({field.name: value})
        assert getattr(settings, field.name) == ((bound,) * 3 if field.kind in ("vec3", "color") else bound)


def _old_preset(tmp_path, interaction: str, **effect):
    """A format 1 preset (before iterations and cohesion served every interaction), as parse_preset reads it."""
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"format_version": 1, "label": "Old", "effect": {"interaction": interaction, **effect},
                                "spawned": [{"label": "Drops", "effect": {"spawn_from": "Old", "interaction": interaction,
                                                                          **effect}}]}))
    return parse_preset(path)


def test_an_old_fluid_presets_fluid_iterations_and_cohesion_load_into_iterations_and_cohesion(tmp_path):
    preset = _old_preset(tmp_path, "FLUID", fluid_iterations=7, fluid_cohesion=0.3, iterations=12, cohesion=0.9)
    for effect in (preset.effect, preset.spawned[0][1]):
        assert (effect.iterations, effect.cohesion) == (7, 0.3), "the fluid's own were the ones it simulated with"


def test_an_old_fluid_preset_without_them_takes_their_old_defaults(tmp_path):
    preset = _old_preset(tmp_path, "FLUID", iterations=12, cohesion=0.9)
    assert (preset.effect.iterations, preset.effect.cohesion) == (4, 0.0)


def test_an_old_granular_preset_keeps_its_own_iterations_and_cohesion(tmp_path):
    preset = _old_preset(tmp_path, "GRANULAR", fluid_iterations=7, fluid_cohesion=0.3, iterations=12, cohesion=0.9)
    assert (preset.effect.iterations, preset.effect.cohesion) == (12, 0.9)


def test_a_new_preset_is_not_migrated_and_the_old_names_are_refused_naming_the_new(tmp_path):
    path = tmp_path / "new.json"
    path.write_text(json.dumps({"format_version": FORMAT_VERSION, "effect": {"interaction": "FLUID", "iterations": 9}}))
    assert parse_preset(path).effect.iterations == 9
    with pytest.raises(SettingsError, match="unknown effect setting 'fluid_iterations' \\(now 'iterations'\\)"):
        effect_settings({"fluid_iterations": 3})


def test_a_fluid_preset_written_now_reads_back_its_iterations_and_cohesion(tmp_path):
    fluid = effect_settings({"interaction": "FLUID", "iterations": 9, "cohesion": 0.2})
    write_preset(tmp_path / "mine.json", "Mine", fluid, render_settings())
    assert parse_preset(tmp_path / "mine.json").effect == fluid
