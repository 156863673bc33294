"""Every warning of a bake where the artist looks: once each in the bake operator's report, on the command line's
stderr and in the bake's sidecar (``gpu_particles_bake.json``)."""

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import bpy

from tests.conftest import add_effect
from tests.output.test_bake_modal import fake_operator

ROOT = Path(__file__).resolve().parents[2]
NO_LIGHT = "lit with no light: the lit effects on 'Emitter' are black"


def bake(scene, frames=None):
    """The bake operator run as a script runs it (blocking); (its reports, the sidecar's warnings)."""
    operator = fake_operator()
    if frames is not None:
        operator.properties = SimpleNamespace(is_property_set=lambda name: True)
        operator.frame_start, operator.frame_end = frames
    assert operator.execute(SimpleNamespace(scene=scene)) == {"FINISHED"}, operator.reports
    record = json.loads((Path(bpy.path.abspath(scene.render.filepath)).parent / "gpu_particles_bake.json").read_text())
    return [message for kind, message in operator.reports if kind == {"WARNING"}], record["warnings"]


def test_a_lit_effect_without_light_warns_once_in_the_report_and_the_sidecar(scene):
    add_effect(lighting="LIT")
    reports, recorded = bake(scene)
    assert reports == recorded, "the report and the sidecar say the same, in the same order"
    assert [w for w in reports if w.startswith(NO_LIGHT)] == [reports[0]] and len(reports) == 1, reports


def test_a_lit_effect_without_light_warns_once_on_the_command_lines_stderr(tmp_path):
    """The Smoke preset's stage without its lights and World: the command line's own bake of a lit effect in a
    dark scene."""
    script = ("import dataclasses, sys\n"
              "from addon import cli\n"
              "from addon.engine.settings import presets\n"
              "smoke = presets.load_preset('smoke')\n"
              "dark = dataclasses.replace(smoke, stage={k: v for k, v in smoke.stage.items() "
              "if k not in ('lights', 'world')})\n"
              "presets.load_preset = lambda name, *args, **kwargs: dark\n"
              "sys.exit(cli.main(sys.argv[1:]))\n")
    out = tmp_path / "dark"
    result = subprocess.run([sys.executable, "-c", script, "bake", "--preset", "smoke", "--frames", "1-3", "--res",
                             "64x36", "--count", "2000", "--out", str(out)], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    said = [line for line in result.stderr.splitlines() if line.startswith("gpu_particles bake: ")]
    assert [line for line in said if NO_LIGHT in line] == [f"gpu_particles bake: {NO_LIGHT} (add a light, brighten "
                                                           "the World, or set Lighting to Emission)"], result.stderr
    record = json.loads((out / "gpu_particles_bake.json").read_text())
    assert [w for w in record["warnings"] if w.startswith(NO_LIGHT)] == [said[-1].removeprefix("gpu_particles bake: ")]


def test_settings_past_their_bounds_are_clamped_and_the_bake_names_each_with_its_numbers(scene):
    """A script (as an old file, or a preset applied before) sets values the fields do not allow: the effect keeps
    them, the bake clamps them and says which effect, which setting, from what to what."""
    few = add_effect(count=500, spawn_count=0, flipbook_columns=0, trail_points=65)
    few.name = "Few"
    many = add_effect(count=500, spawn_count=1_000_000)
    many.name = "Many"
    assert (few.spawn_count, few.flipbook_columns, few.trail_points, many.spawn_count) == (0, 0, 65, 1_000_000)
    reports, recorded = bake(scene)
    assert reports == recorded
    assert {"Emitter/Few: Spawn Count 0 raised to 1", "Emitter/Few: Flipbook Columns 0 raised to 1",
            "Emitter/Few: Trail Points 65 lowered to 64", "Emitter/Many: Spawn Count 1,000,000 lowered to 4,096"} \
        <= set(reports), reports
    assert len(reports) == len(set(reports)) == 4, "each once, not once a frame"
    assert (few.spawn_count, many.spawn_count) == (0, 1_000_000), "the bake changed none of them"


def test_a_preset_past_the_bounds_is_applied_as_given_and_each_clamp_is_reported(scene, tmp_path, monkeypatch):
    """A preset file (a family: Crackle spawned from Fireworks) with numbers past their bounds: adding it keeps them
    on the effects and warns, naming effect, setting and numbers; applying it to an effect does the same; a bake
    names them again."""
    from addon.ui import operators

    fireworks = json.loads((ROOT / "presets" / "fireworks.json").read_text())
    fireworks["effect"]["trail_points"] = 65
    crackle = next(entry for entry in fireworks["spawned"] if entry["label"] == "Crackle")
    crackle["effect"]["spawn_count"] = 0
    fireworks["render"]["emax"] = 0
    monkeypatch.setattr(operators, "user_preset_dir", lambda: tmp_path)
    (tmp_path / "loud.json").write_text(json.dumps(fireworks))
    context = bpy.context
    operator = fake_operator(operators.GPU_PARTICLES_OT_add)
    operator.preset = "loud"
    assert operator.execute(SimpleNamespace(scene=scene, active_object=context.active_object,
                                            view_layer=context.view_layer,
                                            selected_objects=context.selected_objects)) == {"FINISHED"}
    effects = context.active_object.gpu_particles.effects
    assert (effects["Fireworks"].trail_points, effects["Crackle"].spawn_count) == (65, 0)
    clamps = ["scene 'Scene': Emax 0 raised to 1e-06", "Emitter/Fireworks: Trail Points 65 lowered to 64",
              "Emitter/Crackle: Spawn Count 0 raised to 1"]
    assert [m for kind, m in operator.reports if kind == {"WARNING"}] == clamps
    operator = fake_operator(operators.GPU_PARTICLES_OT_apply_preset)
    operator.filepath, effects["Fireworks"].trail_points = str(tmp_path / "loud.json"), 8
    assert operator.execute(SimpleNamespace(scene=scene, active_object=bpy.context.active_object)) == {"FINISHED"}
    assert [m for kind, m in operator.reports if kind == {"WARNING"}] == clamps, "the family's child takes the preset again"
    assert effects["Fireworks"].trail_points == 65
    for effect in effects:
        effect.count = min(effect.count, 300)
    reports, _ = bake(scene, (1, 1))
    assert [w for w in reports if " raised to " in w or " lowered to " in w] == clamps


def test_lost_spawned_children_reach_the_bake_warnings(scene):
    """The fireworks family with 3,000 slots for a 2,000-spark burst per rocket loses sparks by frame 36: the
    bake of frame 36 (simulated from the start) says how many, once."""
    bpy.ops.gpu_particles.add(preset="fireworks")
    effects = bpy.context.active_object.gpu_particles.effects
    effects["Sparks"].count = effects["Crackle"].count = 3000
    scene.frame_end = 36
    reports, recorded = bake(scene, (36, 36))
    assert reports == recorded
    lost = [w for w in reports if "spawned particles lost" in w]
    assert len(lost) == 1 and lost[0].startswith("effect 'Sparks' on 'Emitter': ") and \
        int(lost[0].split(": ")[1].split(" ")[0].replace(",", "")) > 0, reports


def test_a_light_keyed_past_the_power_limit_warns_once_over_the_bake(scene):
    """A point light whose power is keyed above lighting.MAX_POWER and changes every frame: one warning for the
    bake, not one a frame."""
    add_effect(lighting="LIT")
    light = bpy.data.objects.new("Blinding", bpy.data.lights.new("Blinding", "POINT"))
    scene.collection.objects.link(light)
    for frame, power in ((1, 1e13), (4, 4e13)):
        light.data.energy = power
        light.data.keyframe_insert("energy", frame=frame)
    reports, recorded = bake(scene, (1, 4))
    clamped = [w for w in reports if w.startswith("light 'Blinding': its power is above")]
    assert len(clamped) == 1 and clamped == [w for w in recorded if "'Blinding'" in w], reports
