"""Look edits: a setting of settings.LOOK_FIELDS changes how particles are drawn, never their simulation, so an
edit of one keeps the simulated history (viewport, renders, disk cache) and draws what a fresh simulation would."""

import dataclasses
from pathlib import Path

import bpy
import numpy as np
import pytest

from addon import viewport
from addon.engine.look.look import LOOK_SIZE
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import EFFECT_FIELDS, LOOK_FIELDS, effect_settings
from addon.scene.renderer import SceneRenderer, camera_of
from addon.scene.snapshot import EffectInput, SceneSnapshot
from tests.conftest import add_effect

ROOT = Path(__file__).resolve().parents[2]
W, H = 64, 36

# A value unlike the default for every look field: all of them at once must leave the simulation as it was.
LOOK_EDITS = {
    "color_start": (0.1, 0.9, 0.3), "color_end": (0.0, 0.2, 1.5), "color_by": "SPEED", "color_speed": 2.0,
    "emission_strength": 7.0, "color_random": 0.6,
    "size_end": 0.3, "size_random": 0.4, "particle_type": "STRETCHED", "stretch": 0.2, "blend_mode": "ALPHA",
    "opacity": 0.9, "sprite_image": str(ROOT / "presets" / "textures" / "smoke_puff_8x8.png"),
    "sprite_normals": "normals.png", "flipbook_columns": 8, "flipbook_rows": 8, "flipbook_mode": "RATE",
    "flipbook_rate": 12.0, "flipbook_random_start": 0.5, "flipbook_blend": "NONE", "flipbook_vectors": "vectors.png",
    "flipbook_vector_strength": 0.3, "rotation": 0.5, "rotation_random": 1.0, "spin": 2.0, "spin_random": 0.5,
    "rotation_align": "VELOCITY", "trail_width": 3.0, "trail_width_end": 0.5, "trail_color_end": (0.2, 0.3, 0.4),
    "trail_fade": 0.2, "lighting": "BOTH", "albedo": (0.2, 0.5, 0.7), "albedo_end": (0.9, 0.1, 0.1),
    "density": 4.0, "anisotropy": 0.5, "sprite_relief": 1.0, "shadow_density": 0.3, "shadows_on_scene": False,
}


def test_every_look_field_is_an_effect_field_with_an_edit_here():
    names = {f.name for f in EFFECT_FIELDS}
    assert LOOK_FIELDS <= names
    assert set(LOOK_EDITS) == LOOK_FIELDS
    defaults = effect_settings()
    edited = effect_settings(LOOK_EDITS)  # every edit is a valid value
    assert all(getattr(edited, name) != getattr(defaults, name) for name in LOOK_FIELDS)


def _snapshot(*settings, names=None) -> SceneSnapshot:
    names = names or [(f"Emitter{i}", f"Effect{i}") for i in range(len(settings))]
    effects = tuple(EffectInput(obj, effect, s, None) for (obj, effect), s in zip(names, settings))
    return SceneSnapshot(effects, None, 1, 250, 1 / 24)


def _another_value(field):
    """A valid value of ``field`` unlike its default."""
    if field.kind == "enum":
        return next(item for item in field.items if item != field.default)
    if field.kind == "string":
        return "Other"
    if field.kind == "bool":
        return not field.default
    if field.kind in ("vec3", "color"):
        return tuple(min(v + 0.25, field.max) if v + 0.25 <= field.max else v - 0.25 for v in field.default)
    step = 1 if field.kind == "int" else 0.25 * max(abs(field.default), 1e-3)
    return field.default + step if field.max is None or field.default + step <= field.max else field.default - step


@pytest.mark.parametrize("field", EFFECT_FIELDS, ids=lambda f: f.name)
def test_the_history_key_follows_every_setting_but_the_look(field):
    base = effect_settings()
    edited = dataclasses.replace(base, **{field.name: _another_value(field)})
    same = _snapshot(base).effect_key(0) == _snapshot(edited).effect_key(0)
    assert same == (field.name in LOOK_FIELDS)


def test_a_child_that_inherits_colors_is_keyed_by_its_parents_colors():
    names = [("Rocket", "Rockets"), ("Rocket", "Sparks")]
    parent = effect_settings()
    recolored = dataclasses.replace(parent, color_start=(0.0, 1.0, 0.0), color_end=(0.0, 0.0, 1.0))
    for inherit in (0.0, 0.5):
        child = effect_settings({"spawn_from": "Rockets", "spawn_inherit_color": inherit})
        before, after = _snapshot(parent, child, names=names), _snapshot(recolored, child, names=names)
        assert before.effect_key(0) == after.effect_key(0), "the parent's own history has no colors"
        assert (before.effect_key(1) == after.effect_key(1)) == (inherit == 0.0)


def _family(scene):
    """A trailed parent in turbulence whose deaths spawn trailed sparks: every kind of state a look could touch."""
    parent = add_effect(count=1500, lifetime=0.3, lifetime_random=0.5, trail_points=6, turbulence_strength=3.0,
                        velocity=(0.0, 0.0, 3.0))
    parent.name = "Rockets"
    child = add_effect(count=4000, spawn_from="Rockets", spawn_count=3, trail_points=4, emitter_shape="POINT",
                       lifetime=0.5)
    return parent, child


def _states(scene, frame):
    renderer = SceneRenderer(scene, 16, 16)
    renderer.advance_to(frame)
    states = []
    for system in renderer.simulation.systems:
        states += [*system.read_state(), *system.trails.read()]
    return states


def test_every_look_edit_leaves_the_simulation_alone(scene):
    effects = _family(scene)
    before = _states(scene, 9)
    assert sum(int((PARTICLE.read_image("pos_age", pos_age)["age"] >= 0).sum()) for pos_age in before[4::4]) > 0, \
        "sparks were spawned"
    for effect in effects:
        for name, value in LOOK_EDITS.items():
            setattr(effect, name, value)
    after = _states(scene, 9)
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)


def test_a_look_edit_keeps_the_simulation_and_draws_like_a_fresh_one(scene):
    effect = add_effect(count=3000, emission_strength=3.0, size=0.03)
    renderer = SceneRenderer(scene, W, H)
    renderer.render(6)
    simulation, steps = renderer.simulation, renderer.simulation.timeline.steps_run
    effect.color_start, effect.particle_type, effect.blend_mode = (0.2, 1.0, 0.4), "SPRITE", "ALPHA"
    edited = renderer.render(6)
    assert renderer.simulation is simulation
    assert renderer.simulation.timeline.steps_run == steps, "no step since the edit"
    np.testing.assert_array_equal(edited, SceneRenderer(scene, W, H).render(6))
    effect.drag = 0.5  # shapes the motion: a fresh simulation
    renderer.render(6)
    assert renderer.simulation is not simulation


def _edited_in_the_overlay(scene, edit):
    """The overlay's frame 5 after ``edit()`` (asserted to keep its renderer and change the frame), a fresh
    overlay's frame (to compare) and the kept renderer; the overlay is left fresh."""
    viewport.free()
    camera = camera_of(scene, W, H)
    view = np.array(scene.camera.matrix_world.inverted())
    scene.frame_set(5)

    def draw(o):
        return o.host.read(o.composite(scene, camera.view_proj, view, W, H))

    overlay = viewport.overlay()
    before, renderer = draw(overlay), overlay.renderer
    edit()
    assert not overlay.stale
    edited = draw(overlay)
    assert overlay.renderer is renderer, "the simulation kept"
    assert not np.array_equal(before, edited)
    viewport.free()
    return edited, draw(viewport.overlay()), renderer


def test_the_overlay_redraws_a_look_edit_without_simulating_again(scene):
    effect = add_effect(count=3000)
    edited, fresh, _ = _edited_in_the_overlay(scene, lambda: setattr(effect, "color_start", (0.1, 0.2, 1.0)))
    np.testing.assert_array_equal(fresh, edited)
    viewport.free()


def test_a_render_edit_keeps_the_simulation_and_the_memory_one_does_not(scene):
    """Render settings only draw (emax, occlusion...), but for the checkpoints' memory the timeline is made with."""
    add_effect(count=3000, emission_strength=6.0)

    def edit():
        scene.gpu_particles.emax, scene.gpu_particles.occlusion = 0.05, "NONE"

    edited, fresh, kept = _edited_in_the_overlay(scene, edit)
    np.testing.assert_array_equal(fresh, edited)
    assert kept.prepass is None, "the kept renderer follows the occlusion"
    overlay = viewport.overlay()
    renderer = overlay.renderer
    scene.gpu_particles.cache_memory = 64.0
    overlay.composite(scene, camera_of(scene, W, H).view_proj, np.array(scene.camera.matrix_world.inverted()), W, H)
    assert overlay.renderer is not renderer
    viewport.free()


def test_a_child_inheriting_colors_is_keyed_by_its_parents_ramp():
    names = [("Rocket", "Rockets"), ("Rocket", "Sparks")]
    parent, child = effect_settings(), effect_settings({"spawn_from": "Rockets", "spawn_inherit_color": 1.0})
    green = np.tile(np.float32([0.0, 1.0, 0.0]), (LOOK_SIZE, 1))

    def keys(ramp):
        effects = (EffectInput(*names[0], parent, None, ramp), EffectInput(*names[1], child, None))
        snapshot = SceneSnapshot(effects, None, 1, 250, 1 / 24)
        return snapshot.effect_key(0), snapshot.effect_key(1)

    plain, ramped = keys(None), keys(green)
    assert plain[0] == ramped[0] and plain[1] != ramped[1]


def _ramped_family():
    """Red rockets with a green color ramp whose deaths spawn sparks inheriting their color; the rockets."""
    parent = add_effect(count=100, lifetime=0.1, lifetime_random=0.0, color_start=(1.0, 0.0, 0.0),
                        color_end=(1.0, 0.0, 0.0))
    parent.name = "Rockets"
    assert bpy.ops.gpu_particles.add_color_ramp() == {"FINISHED"}
    for element in parent.ramp_texture.color_ramp.elements:
        element.color = (0.0, 1.0, 0.0, 1.0)
    add_effect(count=5000, spawn_from="Rockets", spawn_count=2, spawn_inherit_color=1.0, lifetime=1.0)
    return parent


def test_the_overlay_simulates_again_when_an_inherited_ramp_is_edited(scene):
    viewport.free()
    parent = _ramped_family()
    scene.frame_set(5)
    camera = camera_of(scene, W, H)
    view = np.array(scene.camera.matrix_world.inverted())
    overlay = viewport.overlay()
    overlay.composite(scene, camera.view_proj, view, W, H)
    renderer = overlay.renderer
    overlay.composite(scene, camera.view_proj, view, W, H)
    assert overlay.renderer is renderer
    parent.ramp_texture.color_ramp.elements[0].color = (0.0, 0.0, 1.0, 1.0)
    overlay.composite(scene, camera.view_proj, view, W, H)
    assert overlay.renderer is not renderer, "the sparks' history changed"
    viewport.free()


def _inherited_tints(renderer):
    child = renderer.simulation.systems[1]
    tint = child.host.read(child.tint).reshape(-1, 4)[: child.count]
    return tint[tint[:, 3] > 0, :3]


def test_births_inherit_the_ramp_the_simulation_was_made_with(scene):
    """From the first step (before any draw), and after a draw with the ramp edited: the births' tints are the
    history the simulation's key names; a fresh simulation takes the edited ramp."""
    parent = _ramped_family()
    renderer = SceneRenderer(scene, 16, 16)
    renderer.advance_to(6)
    green, blue = np.float32([0.0, 1.0, 0.0]), np.float32([0.0, 0.0, 1.0])
    assert len(_inherited_tints(renderer)) > 0
    np.testing.assert_allclose(_inherited_tints(renderer), np.broadcast_to(green, _inherited_tints(renderer).shape))
    for element in parent.ramp_texture.color_ramp.elements:
        element.color = (0.0, 0.0, 1.0, 1.0)
    renderer.render(9)  # draws the edited ramp
    before = len(_inherited_tints(renderer))
    renderer.advance_to(12)  # steps after that draw
    tints = _inherited_tints(renderer)
    assert len(tints) > before, "births after the draw"
    np.testing.assert_allclose(tints, np.broadcast_to(green, tints.shape))
    fresh = SceneRenderer(scene, 16, 16)
    fresh.advance_to(12)
    np.testing.assert_allclose(_inherited_tints(fresh), np.broadcast_to(blue, _inherited_tints(fresh).shape))


def test_a_keyed_color_animates_a_bake_without_simulating_again(scene):
    """A look setting keyed over the shot changes every frame: each frame redraws the same simulation."""
    from addon.scene.index import scene_edited

    effect = add_effect(count=3000, emission_strength=3.0)
    for frame, color in ((1, (1.0, 0.0, 0.0)), (8, (0.0, 1.0, 0.0))):
        effect.color_start = effect.color_end = color
        effect.keyframe_insert("color_start", frame=frame)
        effect.keyframe_insert("color_end", frame=frame)
    scene_edited()
    renderer = SceneRenderer(scene, W, H)
    first = renderer.render(2)
    simulation = renderer.simulation
    last = renderer.render(8)
    assert renderer.simulation is simulation and simulation.timeline.steps_run == 7, "one step a frame"
    assert first[..., 0].max() > 0 and last[..., 0].max() == 0 and last[..., 1].max() > 0, "red, then green"
