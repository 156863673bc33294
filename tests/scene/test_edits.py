"""What an edit costs: the settings' affects tags, edits.edit_between on two snapshots, and the docs' table of it."""

import dataclasses
import re
from pathlib import Path

import bpy
import numpy as np
import pytest

from addon import viewport
from addon.engine.draw.glints import GLINT_FIELDS
from addon.engine.look.look import LOOK_SIZE
from addon.engine.settings.settings import (
    AFFECTS,
    EFFECT_FIELDS,
    LOOK_FIELDS,
    RENDER_FIELDS,
    RENDER_SIMULATION_FIELDS,
    Field,
    effect_settings,
    render_settings,
)
from addon.engine.simulate.effectors import EmitterMesh
from addon.scene.edits import COSTS, Edit, changes, cost_of, edit_between, emitters_edit
from addon.scene.renderer import camera_of
from addon.scene.snapshot import EffectInput, EffectsWatch, SceneSnapshot, read_snapshot
from tests.conftest import add_effect

ROOT = Path(__file__).resolve().parents[2]
NAMES = (("Rocket", "Rockets"), ("Rocket", "Sparks"))
GREEN = np.tile(np.float32([0.0, 1.0, 0.0]), (LOOK_SIZE, 1))


def test_every_field_says_what_an_edit_of_it_touches():
    for field in EFFECT_FIELDS + RENDER_FIELDS:
        assert field.affects in AFFECTS, field.name
        assert field.affects in COSTS, field.name
    assert {f.affects for f in EFFECT_FIELDS} == {"simulation", "look"}, "effect settings never composite"


def test_the_look_memory_and_glint_lists_are_views_of_the_tags():
    assert LOOK_FIELDS == {f.name for f in EFFECT_FIELDS if cost_of(f) is Edit.RELOOK}
    assert RENDER_SIMULATION_FIELDS == {f.name for f in RENDER_FIELDS if cost_of(f) is Edit.RESIMULATE} == {
        "cache_memory"}
    assert set(GLINT_FIELDS) == {f.name for f in RENDER_FIELDS if cost_of(f) is Edit.REDRAW}
    assert set(GLINT_FIELDS) == {f.name for f in RENDER_FIELDS if f.name.startswith("glint")}


def test_a_field_with_an_unknown_tag_is_refused_by_name():
    with pytest.raises(ValueError, match="field spin: affects must be one of simulation, look, render, glints"):
        Field("spin", "float", 0.0, affects="color")


@pytest.mark.parametrize("field", EFFECT_FIELDS + RENDER_FIELDS, ids=lambda f: f.name)
def test_an_edit_of_a_setting_calls_the_hook_of_its_cost(field):
    from addon import properties

    hooks = {Edit.REDRAW: properties._drawing_changed, Edit.RELOOK: properties._look_changed,
             Edit.RESIMULATE: properties._settings_changed}
    assert properties._update_of(field) is hooks[cost_of(field)]


def test_an_edit_in_blender_calls_the_hooks_of_its_cost(scene):
    from addon import properties

    effect = add_effect(count=100)
    called = []
    hooks = ((properties.ON_REDRAW, Edit.REDRAW), (properties.ON_LOOK, Edit.RELOOK),
             (properties.ON_CHANGE, Edit.RESIMULATE))
    for hooked, cost in hooks:
        hooked.append(lambda cost=cost: called.append(cost))
    try:
        for owner, name, value, cost in ((scene.gpu_particles, "glint_rays", 6, Edit.REDRAW),
                                         (scene.gpu_particles, "emax", 3.0, Edit.RELOOK),
                                         (effect, "opacity", 0.25, Edit.RELOOK),
                                         (effect, "drag", 0.5, Edit.RESIMULATE),
                                         (scene.gpu_particles, "cache_memory", 64.0, Edit.RESIMULATE)):
            called.clear()
            setattr(owner, name, value)
            assert called == [cost], name
    finally:
        for hooked, _ in hooks:
            del hooked[-1]


def _snapshot(parent=None, child=None, render=None, mesh=None, ramp=None, cloud=None, start=1, end=250, fps=24):
    """Rockets (on a mesh, with a ramp) and Sparks spawned from them, inheriting their colors."""
    parent = effect_settings(parent or {})
    child = effect_settings({"spawn_from": "Rockets", "spawn_inherit_color": 0.5, **(child or {})})
    effects = (EffectInput(*NAMES[0], parent, mesh, ramp), EffectInput(*NAMES[1], child, None))
    return SceneSnapshot(effects, render_settings(render or {}), start, end, 1 / fps, cloud)


TRIANGLE = EmitterMesh(np.float32([[0, 0, 0], [1, 0, 0], [0, 1, 0]]), np.int64([[0, 1, 2]]))
MOVED_TRIANGLE = EmitterMesh(np.float32([[0, 0, 0], [2, 0, 0], [0, 1, 0]]), np.int64([[0, 1, 2]]))
CLOUD = (True, 50_000, 4_000_000, 0, 0.0, 4.0, (1.0, 0.8, 0.5), (0.1, 0.2, 0.6), 1.0, 0.003, "POINT")
EDITS = {
    "nothing": ({}, Edit.NONE),
    "a color": ({"child": {"color_start": (0.1, 0.9, 0.3), "color_end": (1.0, 1.0, 0.0)}}, Edit.RELOOK),
    "sprites and lighting": ({"child": {"particle_type": "SPRITE", "lighting": "LIT"}}, Edit.RELOOK),
    "drag": ({"parent": {"drag": 0.5}}, Edit.RESIMULATE),
    "a spawned effect's drag": ({"child": {"drag": 0.5}}, Edit.RESIMULATE),
    "Emax": ({"render": {"emax": 2.0}}, Edit.RELOOK),
    "occlusion and shadows": ({"render": {"occlusion": "NONE", "shadow_resolution": 32}}, Edit.RELOOK),
    "glints": ({"render": {"glints": "STAR", "glint_intensity": 3.0}}, Edit.REDRAW),
    "cache memory": ({"render": {"cache_memory": 64.0}}, Edit.RESIMULATE),
    "the emitter mesh": ({"mesh": MOVED_TRIANGLE}, Edit.RESIMULATE),
    "the inherited ramp": ({"ramp": GREEN}, Edit.RESIMULATE),
    "the CSG cloud": ({"cloud": CLOUD[:-1] + ("SPRITE",)}, Edit.RESIMULATE),
    "the cloud switched off": ({"cloud": None}, Edit.RESIMULATE),
    "the simulation start": ({"start": 5}, Edit.RESIMULATE),
    "the frame rate": ({"fps": 25}, Edit.RESIMULATE),
    "the end of the disk cache's range": ({"end": 100}, Edit.NONE),
}


@pytest.mark.parametrize("name", EDITS)
def test_an_edit_costs_what_its_dearest_change_costs(name):
    edit, cost = EDITS[name]
    simulated = _snapshot(mesh=TRIANGLE, cloud=CLOUD)
    now = _snapshot(**{"mesh": TRIANGLE, "cloud": CLOUD, **edit})
    assert edit_between(simulated, now) is cost
    assert edit_between(simulated, simulated) is Edit.NONE


def test_a_ramp_no_effect_inherits_is_read_at_each_draw():
    plain = {"child": {"spawn_inherit_color": 0.0}}
    assert edit_between(_snapshot(**plain), _snapshot(ramp=GREEN, **plain)) is Edit.REDRAW
    assert changes(_snapshot(**plain), _snapshot(ramp=GREEN, **plain)) == [("Rocket/Rockets: ramp", Edit.REDRAW)]


def test_changes_say_why_a_color_edit_simulates_again():
    """The parent's color is a look, but its child inherits it: the child's history changed."""
    recolored = _snapshot(parent={"color_start": (0.0, 0.0, 1.0)})
    assert changes(_snapshot(), recolored) == [("Rocket/Rockets: color_start", Edit.RELOOK),
                                               ("Rocket/Sparks: history", Edit.RESIMULATE)]
    assert changes(_snapshot(), _snapshot(parent={"drag": 0.5})) == [("Rocket/Rockets: drag", Edit.RESIMULATE)]


def test_other_effects_cost_a_new_simulation():
    simulated = _snapshot()
    renamed = dataclasses.replace(simulated, effects=(simulated.effects[0], dataclasses.replace(
        simulated.effects[1], effect_name="Embers")))
    assert changes(simulated, renamed) == [("effects", Edit.RESIMULATE)]
    assert edit_between(simulated, dataclasses.replace(simulated, effects=simulated.effects[:1])) is Edit.RESIMULATE


def test_an_emitter_moved_at_the_simulated_frame_costs_a_new_simulation():
    still = [np.eye(4), np.eye(4)]
    moved = [np.eye(4), np.eye(4)]
    moved[1][0, 3] = 0.5
    assert emitters_edit(still, [m.copy() for m in still]) is Edit.NONE
    assert emitters_edit(still, [m + 1e-12 for m in still]) is Edit.NONE, "float noise of a re-read matrix"
    assert emitters_edit(still, moved) is Edit.RESIMULATE


def _docs_table() -> dict[str, set[str]]:
    """docs/features.md's table of what an edit costs: cost -> the settings listed."""
    text = (ROOT / "docs" / "features.md").read_text()
    rows = re.findall(r"^\| \*\*(NONE|REDRAW|RELOOK|RESIMULATE)\*\* \| (.*?) \|", text, re.M)
    return {cost: set(re.findall(r"`(\w+)`", settings)) for cost, settings in rows}


def test_the_docs_table_lists_every_setting_by_its_cost():
    table = _docs_table()
    for cost in (Edit.REDRAW, Edit.RELOOK, Edit.RESIMULATE):
        fields = {f.name for f in EFFECT_FIELDS + RENDER_FIELDS if cost_of(f) is cost}
        listed = table[cost.name]
        assert fields <= listed, f"{cost.name}: {sorted(fields - listed)} missing"
        assert listed - fields <= set(COSTS) - set(AFFECTS), f"{cost.name}: {sorted(listed - fields)} not there"
        assert {part for part in listed if part in COSTS and part not in AFFECTS} == {
            part for part, c in COSTS.items() if c is cost and part not in AFFECTS}


def test_a_snapshot_read_from_the_scene_holds_the_cloud_and_the_inherited_ramps(scene):
    from tests.scene.test_csg_blender import cloud_stage

    parent = add_effect(count=100)
    parent.name = "Rockets"
    assert bpy.ops.gpu_particles.add_color_ramp() == {"FINISHED"}
    child = add_effect(count=100, spawn_from="Rockets", spawn_inherit_color=1.0)
    before = read_snapshot(scene)
    assert before.cloud is None and len(before.inherited_ramps) == 1
    cloud_stage(scene)
    with_cloud = read_snapshot(scene)
    assert with_cloud.cloud is not None and changes(before, with_cloud) == [("cloud", Edit.RESIMULATE)]
    scene.gpu_particles_csg.color_lit = (0.0, 1.0, 0.0)  # an array: kept as values, not Blender's live one
    recolored = read_snapshot(scene)
    assert changes(with_cloud, recolored) == [("cloud", Edit.RESIMULATE)]
    parent.ramp_texture.color_ramp.elements[0].color = (0.0, 0.0, 1.0, 1.0)
    edited = read_snapshot(scene)
    assert edited.inherited_ramps != recolored.inherited_ramps
    assert changes(recolored, edited) == [(f"{child.id_data.name}/{parent.name}: ramp", Edit.REDRAW),
                                           (f"{child.id_data.name}/{child.name}: history", Edit.RESIMULATE)]


def test_the_watch_reads_the_scene_again_only_when_what_it_sees_changed(scene):
    from addon.properties import scene_effects
    from addon.scene.csg import is_primitive

    effect = add_effect(count=100)
    found, watch = scene_effects(scene), EffectsWatch()
    kept = watch.snapshot(scene, found, 1, None)
    assert watch.snapshot(scene, found, 1, kept) is kept
    primitives = [obj for obj in scene.objects if is_primitive(obj)]
    assert watch.snapshot(scene, found, 1, kept, primitives) is kept, "a draw's reads as the snapshot's"
    scene.gpu_particles.glint_intensity = 4.0
    assert watch.snapshot(scene, found, 1, kept) is kept, "a render's reads are the settings"
    drawn = watch.snapshot(scene, found, 1, kept, primitives)
    assert drawn is not kept and edit_between(kept, drawn) is Edit.REDRAW
    effect.color_start = (0.0, 1.0, 0.0)
    assert edit_between(drawn, watch.snapshot(scene, found, 1, drawn)) is Edit.RELOOK


def test_the_overlay_draws_a_glint_edit_with_the_same_simulation(scene):
    viewport.free()
    add_effect(count=3000, emission_strength=40.0, size=0.03)
    camera = camera_of(scene, 64, 36)
    view = np.array(scene.camera.matrix_world.inverted())
    scene.frame_set(4)
    overlay = viewport.overlay()
    before = overlay.host.read(overlay.composite(scene, camera.view_proj, view, 64, 36))
    renderer, steps = overlay.renderer, overlay.renderer.simulation.timeline.steps_run
    scene.gpu_particles.glints, scene.gpu_particles.glint_threshold = "STAR", 0.5
    assert not overlay.stale
    starred = overlay.host.read(overlay.composite(scene, camera.view_proj, view, 64, 36))
    assert overlay.renderer is renderer and renderer.simulation.timeline.steps_run == steps
    assert renderer.snapshot.render.glints == "STAR"
    assert not np.array_equal(before, starred)
    viewport.free()


def test_a_simulation_refuses_a_snapshot_with_another_history(scene):
    from addon.scene.renderer import SceneRenderer

    effect = add_effect(count=100)
    renderer = SceneRenderer(scene, 16, 16)
    simulated = renderer.snapshot
    effect.drag = 0.5
    with pytest.raises(ValueError, match="history differs"):
        renderer.simulation.relook(read_snapshot(scene))
    assert renderer.simulation.snapshot is simulated, "nothing taken"
    effect.drag, effect.color_start = simulated.effects[0].settings.drag, (0.0, 1.0, 0.0)
    renderer.simulation.relook(read_snapshot(scene))
    assert renderer.simulation.systems[0].settings.color_start == (0.0, 1.0, 0.0)
