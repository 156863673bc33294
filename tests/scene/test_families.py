"""Sub-emitter families in a Blender file (families.py): children refer to their parents, so renames,
Shift+D, saving and user presets keep a family whole; a child may take any shape but a mesh, and an effect that
cannot run is skipped by name while the others still simulate and bake."""

import json
from pathlib import Path

import bpy
import numpy as np
import pytest

from addon.engine.seam.records import PARTICLE
from tests.conftest import add_effect

ROOT = Path(__file__).resolve().parents[2]


def add_fireworks(sparks=6000, crackle=3000):
    """The Fireworks family on the active object, its children small enough for llvmpipe."""
    bpy.ops.gpu_particles.add(preset="fireworks")
    obj = bpy.context.active_object
    effects = obj.gpu_particles.effects
    effects["Sparks"].count, effects["Crackle"].count = sparks, crackle
    return obj


def rendered(scene, frame=36):
    """A renderer that rendered ``frame``, and its systems by (object name, effect name)."""
    from addon.scene.renderer import SceneRenderer

    renderer = SceneRenderer(scene, 48, 27)
    renderer.render(frame)
    systems = {(e.object_name, e.effect_name): system
               for e, system in zip(renderer.snapshot.effects, renderer.simulation.systems)}
    return renderer, systems


def live_positions(system) -> np.ndarray:
    pos_age, vel_life = system.read_state()
    particle = PARTICLE.read_images(pos_age, vel_life)
    return particle["position"][particle["life"] > 0]


def family_warnings(renderer) -> list[str]:
    return [w for w in renderer.warnings if "spawns" in w or "skipped" in w]


def test_renaming_the_emitter_and_the_parent_effect_keeps_the_bursts(scene):
    obj = add_fireworks()
    obj.name = "Launcher"
    obj.gpu_particles.effects["Fireworks"].name = "Rockets"
    obj.gpu_particles.effects["Sparks"].name = "Shells"
    assert [e.spawn_from for e in obj.gpu_particles.effects] == ["", "Launcher/Rockets", "Launcher/Shells"]
    renderer, systems = rendered(scene)
    assert family_warnings(renderer) == []
    assert renderer.snapshot.parents == [None, 0, 1], "the crackle still spawns from the renamed sparks"
    assert len(live_positions(systems["Launcher", "Shells"])) > 0, "the renamed rockets still burst"


def test_a_copy_moved_15_m_spawns_its_children_from_its_own_shells(scene):
    obj = add_fireworks()
    obj.animation_data_clear()  # the stage's orbit keys would put the copy back where the emitter is
    for selected in bpy.context.selected_objects:
        selected.select_set(False)
    obj.select_set(True)
    bpy.ops.object.duplicate_move(TRANSFORM_OT_translate={"value": (15.0, 0.0, 0.0)})
    copy = bpy.context.active_object
    assert copy != obj and copy.location.x - obj.location.x == pytest.approx(15.0)
    assert [e.spawn_from for e in copy.gpu_particles.effects] == ["", f"{copy.name}/Fireworks",
                                                                  f"{copy.name}/Sparks"]
    renderer, systems = rendered(scene)
    assert family_warnings(renderer) == []
    assert renderer.snapshot.parents == [None, 0, 1, None, 3, 4], "each copy's crackle from its own sparks"
    middle = obj.location.x + 7.5
    for name, side in ((obj.name, -1.0), (copy.name, 1.0)):
        x = live_positions(systems[name, "Sparks"])[:, 0]
        assert len(x) > 100, f"the sparks of {name} were born"
        assert (np.sign(x - middle) == side).all(), f"the sparks of {name} stay on its side, 7.5 m from each"


def test_a_saved_and_reloaded_file_keeps_the_family(scene, tmp_path):
    from addon.scene.snapshot import read_snapshot

    obj = add_fireworks()
    uids = [e.uid for e in obj.gpu_particles.effects]
    path = tmp_path / "family.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.open_mainfile(filepath=str(path), load_ui=False)
    loaded = bpy.data.objects["Emitter"]
    effects = loaded.gpu_particles.effects
    assert [e.uid for e in effects] == uids and [e.spawn_object for e in effects] == [None, loaded, loaded]
    loaded.name = "Reloaded"
    assert [e.spawn_from for e in effects] == ["", "Reloaded/Fireworks", "Reloaded/Sparks"]
    assert read_snapshot(bpy.context.scene).parents == [None, 0, 1]


def test_a_file_from_before_references_links_its_named_parents_on_load(scene, tmp_path):
    """Older files hold the parent's name as the string ``spawn_from``: the load links it, and a rename after it
    keeps the family."""
    obj = add_fireworks()
    for effect, name in zip(obj.gpu_particles.effects[1:], ("Emitter/Fireworks", "Sparks")):
        effect.spawn_object, effect.spawn_effect = None, ""
        effect["spawn_from"] = name  # as a file saved before references stored it
    assert [e.spawn_from for e in obj.gpu_particles.effects] == ["", "Emitter/Fireworks", "Sparks"]
    path = tmp_path / "old.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.open_mainfile(filepath=str(path), load_ui=False)
    loaded = bpy.data.objects["Emitter"]
    effects = loaded.gpu_particles.effects
    assert [e.spawn_object for e in effects] == [None, loaded, loaded]
    assert all("spawn_from" not in e for e in effects), "the names made references"
    effects["Fireworks"].name = "Rockets"
    assert [e.spawn_from for e in effects] == ["", "Emitter/Rockets", "Emitter/Sparks"]


def test_picking_a_parent_in_the_panel_takes_an_object_then_one_of_its_effects(scene):
    obj = add_fireworks()
    other = bpy.data.objects.new("Other", None)
    scene.collection.objects.link(other)
    bpy.context.view_layer.objects.active = other
    add_effect().name = "Rain"
    sparks = obj.gpu_particles.effects["Sparks"]
    sparks.spawn_object = other
    assert sparks.spawn_from == "Other/(no effect picked)", "still spawned, from no effect yet"
    sparks.spawn_effect_name = "Rain"
    assert sparks.spawn_from == "Other/Rain" and sparks.spawn_effect == other.gpu_particles.effects["Rain"].uid
    sparks.spawn_object = None  # this object
    sparks.spawn_effect_name = "Fireworks"
    assert sparks.spawn_from == "Emitter/Fireworks" and sparks.spawn_object == obj
    sparks.spawn_effect_name = ""
    assert sparks.spawn_from == "" and sparks.spawn_object is None


def test_a_user_preset_of_the_fireworks_family_round_trips(scene, user_dir):
    from addon.engine.settings.settings import simulated
    from addon.properties import effect_settings_of

    obj = add_fireworks()
    obj.gpu_particles.effects["Sparks"].name = "Shells"
    assert obj.gpu_particles.active_effect.name == "Fireworks"
    assert bpy.ops.gpu_particles.save_preset(name="My Show") == {"FINISHED"}
    data = json.loads((user_dir / "my_show.json").read_text())
    assert [(s["label"], s["effect"]["spawn_from"]) for s in data["spawned"]] == [("Shells", "My Show"),
                                                                                   ("Crackle", "Shells")]
    target = bpy.data.objects.new("Other", None)
    scene.collection.objects.link(target)
    bpy.context.view_layer.objects.active = target
    assert bpy.ops.gpu_particles.add(preset="my_show") == {"FINISHED"}
    effects = target.gpu_particles.effects
    assert [e.name for e in effects] == ["My Show", "Shells", "Crackle"]
    assert [e.spawn_from for e in effects] == ["", "Other/My Show", "Other/Shells"], "linked to the new parent"
    for saved, restored in zip(obj.gpu_particles.effects, effects):
        old, new = (simulated(effect_settings_of(e)) for e in (saved, restored))
        assert {k: v for k, v in old.items() if k != "spawn_from"} == \
            {k: v for k, v in new.items() if k != "spawn_from"}


def test_applying_a_family_preset_to_an_effect_adds_its_children_spawned_from_it(scene, user_dir):
    obj = add_fireworks()
    assert bpy.ops.gpu_particles.save_preset(name="My Show") == {"FINISHED"}
    target = bpy.data.objects.new("Other", None)
    scene.collection.objects.link(target)
    bpy.context.view_layer.objects.active = target
    add_effect().name = "Mine"
    assert bpy.ops.gpu_particles.apply_preset(preset="my_show") == {"FINISHED"}
    effects = target.gpu_particles.effects
    assert [(e.name, e.spawn_from) for e in effects] == [("Mine", ""), ("Sparks", "Other/Mine"),
                                                         ("Crackle", "Other/Sparks")]
    assert effects["Mine"].count == obj.gpu_particles.effects["Fireworks"].count


def test_saving_a_child_saves_it_and_its_children_as_an_emitted_preset(scene, user_dir):
    obj = add_fireworks()
    obj.gpu_particles.active_index = 1
    assert bpy.ops.gpu_particles.save_preset(name="Sparks Only") == {"FINISHED"}
    data = json.loads((user_dir / "sparks_only.json").read_text())
    assert data["effect"]["spawn_from"] == "" and data["effect"]["count"] == 6000
    assert [(s["label"], s["effect"]["spawn_from"]) for s in data["spawned"]] == [("Crackle", "Sparks Only")]


def test_a_box_parent_and_a_box_child_spawn(scene):
    parent = add_effect(count=400, emitter_shape="BOX", emitter_scale=(3.0, 1.0, 0.1), lifetime=0.4,
                        lifetime_random=0.0)
    parent.name = "Boxes"
    child = add_effect(count=4000, spawn_from="Boxes", spawn_count=4, emitter_shape="BOX", emitter_radius=0.2)
    child.name = "Shards"
    assert child.spawn_from == "Emitter/Boxes"
    renderer, systems = rendered(scene, 24)
    assert family_warnings(renderer) == []
    assert len(live_positions(systems["Emitter", "Shards"])) > 100, "the box parent's deaths give births"


def test_a_broken_effect_beside_a_good_one_is_skipped_by_name_and_the_good_one_bakes(scene):
    from addon.output.bake import BakeJob

    good = add_effect(count=4000, emission_strength=20.0)
    good.name = "Good"
    broken = add_effect(count=1000, emitter_shape="MESH")  # on an Empty: no faces to emit from
    broken.name = "Broken"
    child = add_effect(count=1000, spawn_from="Good", emitter_shape="MESH")
    child.name = "Meshy"
    job = BakeJob(scene)
    while not job.finished:
        job.step()
    warnings = job.renderer.warnings
    job.close()
    assert "effect 'Broken' on 'Emitter' skipped: emitter 'Emitter' (Empty) has no surface: emitter_shape MESH " \
        "needs an object with faces" in warnings
    assert any(w.startswith("effect 'Meshy' on 'Emitter' skipped: a spawned effect") for w in warnings)
    assert len(job.written) == 4
    image = bpy.data.images.load(str(job.written[-1]))
    assert max(image.pixels[:]) > 0.1, "the good effect baked"
    bpy.data.images.remove(image)


def test_a_bake_of_broken_effects_alone_names_them(scene):
    from addon.output.bake import BakeError, BakeJob

    add_effect(count=1000, emitter_shape="MESH").name = "Broken"
    with pytest.raises(BakeError, match="Nothing to bake: effect 'Broken' on 'Emitter' skipped: emitter 'Emitter' \\(Empty\\) has no surface"):
        BakeJob(scene)


def test_a_family_preset_applied_again_sets_its_children_instead_of_adding_more(scene):
    """Apply Preset of Fireworks on the Fireworks effect it made: the children it has take the preset's settings,
    none is added, and each still spawns from the parent."""
    from addon.families import parent_of

    bpy.ops.gpu_particles.add(preset="fireworks")
    obj = bpy.context.active_object
    effects = obj.gpu_particles.effects
    names = sorted(effect.name for effect in effects)
    crackle = next(effect for effect in effects if effect.name.startswith("Crackle"))
    crackle.spawn_count = 3
    obj.gpu_particles.active_index = next(i for i, effect in enumerate(effects) if parent_of(effect) is None
                                          and effect.name.startswith("Fireworks"))
    assert bpy.ops.gpu_particles.apply_preset(filepath=str(ROOT / "presets" / "fireworks.json")) == {"FINISHED"}
    assert sorted(effect.name for effect in effects) == names
    assert crackle.spawn_count != 3, "the preset's value"
    assert all(parent_of(effect) is not None for effect in effects if effect.name != "Fireworks"
               and not effect.name.startswith("Fireworks"))
