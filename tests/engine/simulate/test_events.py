"""Sub-emitters (GPU events, events.py) on the GPU against their numpy reference (reference/simulate/events.py):
births per event exact, each child's state from its parent's event and the random streams, overflow,
chains, determinism, checkpoints, and what is refused."""

import json
from pathlib import Path

import numpy as np
import pytest

from addon.engine.draw.frame_resources import FrameResources
from addon.engine.pipeline import advance
from addon.engine.reference.simulate import events as ref
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import EffectSettings, SettingsError, effect_settings
from addon.engine.simulate import events, simulation
from addon.engine.simulate.effectors import Collider

DT = 1 / 24
STILL = np.identity(4)
FLOOR = Collider("PLANE", STILL, half_size=(10, 10, 0), bounce=0.4, friction=0.1)

ROCKETS = {"count": 256, "emission": "CONTINUOUS", "lifetime": 0.25, "lifetime_random": 0.6, "velocity": (0, 0, 3),
           "velocity_random": 1.0, "seed": 1, "substeps": 2}
SPARKS = {"count": 3000, "spawn_from": "Rockets", "spawn_count": 6, "spawn_count_random": 0.5,
          "emitter_shape": "SPHERE", "emitter_radius": 0.02, "normal_velocity": 2.0, "velocity": (0, 0, 0.5),
          "velocity_random": 0.3, "spawn_velocity": 0.5, "spawn_cone": 0.3, "spawn_offset": (0, 0, 0.01),
          "lifetime": 0.3, "lifetime_random": 0.5, "seed": 2}
BOX_SPARKS = {**SPARKS, "emitter_shape": "BOX", "emitter_radius": 0.1, "emitter_scale": (3.0, 1.0, 0.5)}
CRACKLE = {"count": 4000, "spawn_from": "Sparks", "spawn_count": 2, "emitter_shape": "POINT", "velocity_random": 1.0,
           "lifetime": 0.1, "lifetime_random": 0.0, "seed": 3}


def build(host, values: list[dict], names: list[str], colliders=()):
    """GPU systems for the effects ``values`` (named ``names``, on one object), linked, with ``colliders``."""
    systems = [simulation.ParticleSystem(host, effect_settings(v)) for v in values]
    warnings = events.link_families(host, systems, [("Emitter", name) for name in names])
    for system in systems:
        system.set_scene_inputs([], list(colliders))
    return systems, warnings


def run_gpu(systems, frames: int) -> None:
    for _ in range(frames):
        advance(systems, DT, [STILL] * len(systems), [STILL] * len(systems))


def run_reference(values: list[dict], parents: list, frames: int, colliders=()):
    members = ref.family([effect_settings(v) for v in values], parents, colliders)
    for _ in range(frames):
        ref.step_family(members, DT, STILL, colliders)
    return members


def born(member) -> np.ndarray:
    """Which slots of a reference member hold a particle that was born (life > 0)."""
    return PARTICLE.read_images(member.pos_age, member.vel_life)["life"] > 0


def assert_matches(system, member) -> None:
    """Which slots live, ages and lifetimes exact; positions and velocities to float32 rounding of the math
    library (sin, cos, pow differ in the last bits)."""
    pos_age, vel_life = (system.host.read(t).reshape(-1, 4)[: system.count] for t in (system.pos_age, system.vel_life))
    gpu, want = PARTICLE.read_images(pos_age, vel_life), PARTICLE.read_images(member.pos_age, member.vel_life)
    np.testing.assert_array_equal(gpu["life"], want["life"])
    np.testing.assert_array_equal(gpu["age"], want["age"])
    np.testing.assert_allclose(gpu["position"], want["position"], atol=2e-4)
    np.testing.assert_allclose(gpu["velocity"], want["velocity"], atol=2e-4)
    if system.spawner is not None:
        assert system.spawner.read_cursor() == member.cursor
        assert system.spawner.read_overflow() == member.lost
    if member.tint is not None:
        np.testing.assert_array_equal(host_tint(system), member.tint)


def host_tint(system) -> np.ndarray:
    return system.host.read(system.tint).reshape(-1, 4)[: system.count]


@pytest.mark.parametrize("sparks", [SPARKS, BOX_SPARKS], ids=["sphere", "box"])
def test_death_events_match_the_reference(host, sparks):
    """A child's shape is where its births fall around each event (the parent's shape plays no part): a sphere,
    or a box of the child's extent, its normal speed out from the event."""
    systems, warnings = build(host, [ROCKETS, sparks], ["Rockets", "Sparks"])
    assert warnings == []
    run_gpu(systems, 8)
    members = run_reference([ROCKETS, sparks], [None, 0], 8)
    assert born(members[1]).sum() > 100, "sparks were born"
    for system, member in zip(systems, members):
        assert_matches(system, member)


def test_three_levels_and_overflow_match_the_reference(host):
    """Rockets -> sparks -> crackle; the crackle's ring is too small, so births are lost (counted, as computed)."""
    crackle = {**CRACKLE, "count": 300}
    systems, _ = build(host, [ROCKETS, SPARKS, crackle], ["Rockets", "Sparks", "Crackle"])
    run_gpu(systems, 10)
    members = run_reference([ROCKETS, SPARKS, crackle], [None, 0, 1], 10)
    assert members[2].lost > 0
    for system, member in zip(systems, members):
        assert_matches(system, member)


def test_collision_events_match_the_reference(host):
    debris = {**ROCKETS, "velocity": (0, 0, -2), "lifetime": 2.0, "emitter_shape": "SPHERE", "emitter_radius": 0.3}
    debris_settings = effect_settings(debris)
    sparks = {**SPARKS, "spawn_on": "COLLISION", "spawn_impact_speed": 1.0, "spawn_from": "Debris"}
    emitter = np.identity(4)
    emitter[2, 3] = 0.5
    systems, _ = build(host, [debris, sparks], ["Debris", "Sparks"], [FLOOR])
    for _ in range(8):
        advance(systems, DT, [emitter, emitter], [emitter, emitter])
    members = ref.family([debris_settings, effect_settings(sparks)], [None, 0], [FLOOR])
    for _ in range(8):
        ref.step_family(members, DT, emitter, [FLOOR])
    assert born(members[1]).sum() > 50, "impacts spawned"
    for system, member in zip(systems, members):
        assert_matches(system, member)


def test_rate_events_match_the_reference(host):
    trail = {**SPARKS, "spawn_on": "RATE", "spawn_rate": 30.0, "spawn_count": 1, "spawn_count_random": 0.0}
    systems, _ = build(host, [ROCKETS, trail], ["Rockets", "Sparks"])
    run_gpu(systems, 6)
    members = run_reference([ROCKETS, trail], [None, 0], 6)
    assert born(members[1]).sum() > 50
    for system, member in zip(systems, members):
        assert_matches(system, member)


TINTED_ROCKETS = {**ROCKETS, "color_start": (1.0, 0.1, 0.05), "color_end": (0.9, 0.8, 0.1)}
TINTED_SPARKS = {**SPARKS, "spawn_inherit_color": 0.75, "color_start": (0.1, 0.2, 1.0), "color_end": (0.0, 0.0, 0.3)}


@pytest.mark.parametrize("spawn_on", ["DEATH", "RATE"])
def test_inherited_color_matches_the_reference(host, spawn_on):
    """Each birth's tint is its parent's color at the event (the end of its look at death, its age / life at a
    rate mark) and the fraction spawn_inherit_color; effects that do not inherit have no tint at all."""
    sparks = {**TINTED_SPARKS, "spawn_on": spawn_on, "spawn_rate": 20.0}
    systems, _ = build(host, [TINTED_ROCKETS, sparks], ["Rockets", "Sparks"])
    assert systems[0].tint is None
    run_gpu(systems, 8)
    members = run_reference([TINTED_ROCKETS, sparks], [None, 0], 8)
    tinted = members[1].tint[:, 3] > 0
    assert tinted.sum() > 100 and (members[1].tint[tinted, 3] == np.float32(0.75)).all()
    if spawn_on == "DEATH":  # every parent dies at the end of its look
        assert (members[1].tint[tinted, :3] == np.float32(TINTED_ROCKETS["color_end"])).all()
    else:  # rate marks fall all along the parents' lives
        assert len(np.unique(members[1].tint[tinted, 1])) > 20
    for system, member in zip(systems, members):
        assert_matches(system, member)


@pytest.mark.parametrize("spawn_on", ["DEATH", "RATE"])
def test_a_parent_colored_by_speed_passes_on_its_color_at_the_events_speed(host, spawn_on):
    """A parent with Color by Speed: each birth's tint is its color at the parent's speed at the event, GPU as the
    reference, and not the color by age."""
    rockets = {**TINTED_ROCKETS, "color_by": "SPEED", "color_speed": 8.0}
    sparks = {**TINTED_SPARKS, "spawn_on": spawn_on, "spawn_rate": 20.0}
    systems, _ = build(host, [rockets, sparks], ["Rockets", "Sparks"])
    run_gpu(systems, 8)
    members = run_reference([rockets, sparks], [None, 0], 8)
    by_age = run_reference([TINTED_ROCKETS, sparks], [None, 0], 8)
    tinted = members[1].tint[:, 3] > 0
    assert tinted.sum() > 100 and not np.array_equal(members[1].tint[tinted], by_age[1].tint[tinted])
    assert_matches(systems[0], members[0])
    # within the velocities' rounding (assert_matches: the math library's last bits), which the speed carries
    np.testing.assert_allclose(host_tint(systems[1]), members[1].tint, rtol=1e-5, atol=0)


def test_a_tinted_particle_is_drawn_in_the_mix_of_its_and_its_parents_color(host, rng):
    """The splat (particle_color, which every draw path shares) draws each slot in mix(its own color over life,
    its tint's rgb, its tint's a), exactly as the reference."""
    from addon.engine.draw.compositing import Camera, Compositor
    from addon.engine.reference.draw import compositing as ref_compositing
    from addon.engine.settings.settings import render_settings

    width, height, n = 64, 48, 2000
    settings = effect_settings({**TINTED_SPARKS, "count": n, "emission_strength": 1.5})
    system = simulation.ParticleSystem(host, settings)
    pos_age, vel_life = np.zeros((n, 4), np.float32), np.zeros((n, 4), np.float32)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["position"][:, :2] = rng.uniform(0, [width, height], (n, 2))
    particle["age"][:] = rng.uniform(0, 0.99, n)
    particle["life"][:] = 1.0
    system.write_state(pos_age, vel_life)
    tint = np.zeros((system.tint.height * system.tint.width, 4), np.float32)
    tint[:n, :3] = rng.uniform(0, 2, (n, 3))
    tint[:n, 3] = rng.choice([0.0, 0.3, 1.0], n)
    system.tint = host.texture("particle_tint", system.tint.width, system.tint.height, "RGBA32F",
                               tint.reshape(system.tint.height, system.tint.width, 4))
    camera = Camera.pixel_grid(width, height)
    compositor = Compositor(FrameResources(host, width, height), render_settings({"emax": 8.0}))
    compositor.splat(system, camera)
    hi, lo = compositor.read_accum()
    ref_hi, ref_lo, _ = ref_compositing.splat(pos_age, vel_life, camera.view_proj, width, height, settings, 8.0,
                                              camera.pixels_per_unit, tint=tint[:n])
    own_hi, _, _ = ref_compositing.splat(pos_age, vel_life, camera.view_proj, width, height, settings, 8.0,
                                         camera.pixels_per_unit)
    assert (ref_hi != own_hi).sum() > 100, "the tint changes the picture"
    np.testing.assert_array_equal(hi, ref_hi)
    np.testing.assert_array_equal(lo, ref_lo)


def test_two_runs_are_byte_identical(host):
    def state():
        systems, _ = build(host, [ROCKETS, SPARKS, CRACKLE], ["Rockets", "Sparks", "Crackle"])
        run_gpu(systems, 6)
        return [host.read(t).tobytes() for s in systems for t in (s.pos_age, s.vel_life)]

    assert state() == state()


def state_bytes(systems) -> list[bytes]:
    return [s.host.read(t).tobytes() for s in systems for t in (s.pos_age, s.vel_life, s.tint) if t is not None]


@pytest.mark.parametrize("on_gpu", [False, True])
def test_a_checkpoint_replays_the_family_exactly(host, on_gpu):
    """Restoring a checkpoint (cursor and inherited tints included) and stepping on repeats the first pass bit for
    bit."""
    systems, _ = build(host, [ROCKETS, TINTED_SPARKS, CRACKLE], ["Rockets", "Sparks", "Crackle"])
    run_gpu(systems, 4)
    saved = [s.snapshot_on_gpu() if on_gpu else s.snapshot() for s in systems]
    run_gpu(systems, 5)
    first = state_bytes(systems)
    for system, state in zip(systems, saved):
        system.restore(state)
    run_gpu(systems, 5)
    assert state_bytes(systems) == first


def test_effects_without_family_run_todays_kernel():
    settings = EffectSettings()
    assert simulation.SIMULATE.for_effect(settings, events=False) is simulation.SIMULATE_KERNELS["FULL"]
    assert "EVENTS" not in dict(simulation.SIMULATE.defines) and "SPAWNED" not in dict(simulation.SIMULATE.defines)


def test_a_missing_parent_or_a_cycle_spawns_nothing_and_says_why(host):
    names = [("A", "Rockets"), ("B", "Sparks"), ("C", "Loop1"), ("D", "Loop2"), ("E", "Orphan")]
    parents, warnings = events.family_parents(["", "Rockets", "Loop2", "Loop1", "Gone"], names)
    assert parents == [None, 0, None, None, None]
    assert any("'Gone', which is not an enabled effect" in w for w in warnings)
    assert sum("cycle" in w for w in warnings) == 2
    # a refused child still simulates (nothing is born), and so does everything else
    orphan = {**SPARKS, "spawn_from": "Gone"}
    systems, warnings = build(host, [ROCKETS, orphan], ["Rockets", "Orphan"])
    assert len(warnings) == 1
    run_gpu(systems, 3)
    assert (PARTICLE.read_images(*systems[1].read_state())["life"] > 0).sum() == 0
    assert (PARTICLE.read_images(*systems[0].read_state())["life"] > 0).sum() > 0


def test_chains_deeper_than_three_levels_are_refused():
    names = [("O", n) for n in ("A", "B", "C", "D")]
    parents, warnings = events.family_parents(["", "A", "B", "C"], names)
    assert parents == [None, 0, 1, None]
    assert "at most 2 levels" in warnings[0]
    parents, warnings = events.family_parents(["", "O/A"], [("O", "A"), ("P", "A")][:1] + [("P", "B")])
    assert parents == [None, 0]
    _, warnings = events.family_parents(["", "", "A"], [("O", "A"), ("P", "A"), ("Q", "C")])
    assert "name the parent as 'Object/Effect'" in warnings[0]


@pytest.mark.parametrize("count, message", [(0, "spawn_count must be at least 1, not 0"),
                                            (10**6, "spawn_count must be at most 4,096, not 1,000,000")])
def test_children_per_event_out_of_range_are_refused(count, message):
    with pytest.raises(SettingsError, match=message):
        effect_settings({"spawn_count": count})


def test_a_spawned_effect_refuses_a_mesh_shape():
    with pytest.raises(SettingsError, match="POINT, SPHERE or BOX, not MESH"):
        simulation.check_spawned(effect_settings({**SPARKS, "emitter_shape": "MESH"}))


@pytest.mark.slow
def test_a_split_bake_from_the_cache_equals_the_whole(tmp_path):
    """The fireworks family baked in two processes, the second from a disk checkpoint (cursors included), gives
    the frames of one bake byte for byte."""
    from tests.scene.test_sim_cache import cli

    shot = ("--shot", "1-60", "--count", "64")
    cli(*shot, "--frames", "1-60", "--out", str(tmp_path / "whole"), preset="fireworks")
    cache = str(tmp_path / "cache")
    cli(*shot, "--frames", "1-45", "--out", str(tmp_path / "split"), "--cache", cache, preset="fireworks")
    cli(*shot, "--frames", "46-60", "--out", str(tmp_path / "split"), "--cache", cache, preset="fireworks")
    whole, split = (sorted((tmp_path / name).glob("*.png")) for name in ("whole", "split"))
    assert len(whole) == len(split) == 60
    for a, b in zip(whole, split):
        assert a.name == b.name and a.read_bytes() == b.read_bytes(), a.name
    record = json.loads((tmp_path / "split" / "gpu_particles_bake.json").read_text())
    assert record["cache"]["loaded_checkpoints"], "the second process started from a checkpoint"
    manifest = json.loads((Path(cache) / "manifest.json").read_text())
    assert [e["effect"] for e in manifest["effects"]] == ["Fireworks", "Sparks", "Crackle"]


def test_the_fireworks_family_in_a_scene_and_a_parent_deleted(scene):
    """The preset adds its family on one object, the children referring to their parents (read as 'Object/Effect');
    sparks burst in the scene; deleting the parent leaves the sparks without births and says why, the rest
    renders."""
    import bpy

    from addon.scene.renderer import SceneRenderer

    bpy.ops.gpu_particles.add(preset="fireworks")
    emitter = bpy.context.active_object
    effects = emitter.gpu_particles.effects
    assert [e.name for e in effects] == ["Fireworks", "Sparks", "Crackle"]
    assert emitter.gpu_particles.active_effect.name == "Fireworks"
    assert [e.spawn_from for e in effects] == ["", f"{emitter.name}/Fireworks", f"{emitter.name}/Sparks"]
    effects["Sparks"].count = effects["Crackle"].count = 3000
    renderer = SceneRenderer(scene, 48, 27)
    renderer.render(36)
    assert len(renderer.warnings) == 1 and "on 'Emitter': " in renderer.warnings[0] and \
        "spawned particles lost (more were alive or born at once than its count): raise its count" in \
        renderer.warnings[0], "a 2,000-spark burst into 3,000 slots overflows, and says so"
    assert renderer.stats()["live_particles"][1] > 0, "rockets burst into sparks"
    effects.remove(0)
    assert [e.spawn_from for e in effects] == ["Emitter/(deleted effect)", "Emitter/Sparks"]
    bpy.ops.gpu_particles.add(preset="default")
    renderer = SceneRenderer(scene, 48, 27)
    pixels = renderer.render(36)
    assert any("spawns from 'Emitter/(deleted effect)', which is not an enabled effect" in w
               for w in renderer.warnings)
    assert renderer.stats()["live_particles"][:2] == [0, 0] and pixels[..., :3].max() > 0, "the default still flies"


def test_the_stats_panel_shows_spawned_particles_lost(scene):
    """Overflow is reported like Emax's: the Stats panel counts the births lost once the overlay measured."""
    import bpy

    from addon import viewport
    from addon.scene.renderer import camera_of
    from addon.ui import panels
    from tests.scene.test_viewport import scene_view
    from tests.ui.test_panels import draw

    bpy.ops.gpu_particles.add(preset="fireworks")
    effects = bpy.context.active_object.gpu_particles.effects
    effects["Sparks"].count = effects["Crackle"].count = 1000  # a 2,000-spark burst does not fit
    viewport.free()
    scene.frame_set(36)
    viewport.overlay().composite(scene, camera_of(scene, 32, 18).view_proj, scene_view(scene), 32, 18, measure=True)
    labels = [text for kind, text, *_ in draw(panels.GPU_PARTICLES_PT_stats) if kind == "label"]
    lost = viewport.last_stats().spawn_lost
    assert lost > 0 and labels[-1] == f"Spawned particles lost: {lost:,} (raise the spawned effect's count)"
    viewport.free()
