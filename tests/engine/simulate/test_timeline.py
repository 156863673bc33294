"""Timeline checkpoints (engine) and the scene's emitters, fields and colliders (Blender)."""

import bpy
import numpy as np
import pytest

from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import effect_settings
from addon.engine.simulate import simulation
from addon.engine.simulate.timeline import Timeline
from tests.conftest import add_effect

DT = 1 / 24


def moving(frame):
    m = np.identity(4)
    m[:3, 3] = (0.1 * frame, 0.0, 0.02 * frame)
    return m


def timeline_for(host, settings, budget):
    system = simulation.ParticleSystem(host, settings)

    def start():
        system.reset()
        system.step(DT, moving(0), moving(0))
        return 0

    return system, Timeline([system], start, lambda f: system.step(DT, moving(f - 1), moving(f)), budget, interval=5)


@pytest.mark.parametrize("on_gpu", [False, True], ids=["host", "gpu"])
@pytest.mark.parametrize("layout", ["FULL", "COMPACT"])
def test_scrubbing_back_replays_bit_for_bit_from_a_checkpoint(host, layout, on_gpu):
    s = effect_settings({"count": 3000, "lifetime": 0.3, "turbulence_strength": 2.0, "state_layout": layout})
    straight, line = timeline_for(host, s, budget=1 << 30)
    line.on_gpu = on_gpu
    line.seek(12)
    at_12 = straight.read_state()
    line.seek(33)
    at_33 = straight.read_state()
    before = line.steps_run
    line.seek(12)  # back: restore frame 10, two steps
    assert line.steps_run - before == 2
    for a, b in zip(straight.read_state(), at_12):
        np.testing.assert_array_equal(a, b)
    line.seek(33)  # forward again from the checkpoint at 30
    assert line.steps_run - before == 5
    for a, b in zip(straight.read_state(), at_33):
        np.testing.assert_array_equal(a, b)


def test_checkpoints_stay_within_the_memory_budget(host):
    s = effect_settings({"count": 3000})
    system, line = timeline_for(host, s, budget=0)
    one = sum(a.nbytes for a in system.snapshot().arrays)
    assert system.snapshot_nbytes == one
    line.budget_bytes = 3 * one
    line.seek(40)
    assert line.nbytes <= 3 * one and len(line.checkpoints) == 3
    assert 0 in line.checkpoints, "the start frame is kept longest"
    line.seek(22)  # from the nearest kept checkpoint at or before 22, or from the start
    reference, straight = timeline_for(host, s, budget=0)
    straight.seek(22)
    for a, b in zip(system.read_state(), reference.read_state()):
        np.testing.assert_array_equal(a, b)
    line.clear()
    assert line.frame is None and not line.checkpoints


def test_checkpoints_on_the_gpu_or_over_the_budget_are_not_read_back():
    """Playing past checkpoint frames waits for no readback with GPU checkpoints, or with a budget
    smaller than one checkpoint (none is kept)."""
    from bench.counting import CountingHost

    counting = CountingHost()
    system, line = timeline_for(counting, effect_settings({"count": 3000}), budget=0)
    line.budget_bytes = system.snapshot_nbytes - 1
    line.seek(12)
    assert counting.calls["read"] == 0 and not line.checkpoints
    line.budget_bytes, line.on_gpu = 1 << 30, True
    line.clear()
    line.seek(22)  # from the start again, a checkpoint every 5 frames, on the GPU
    assert counting.calls["read"] == 0 and sorted(line.checkpoints) == [0, 5, 10, 15, 20]
    assert line.nbytes == 5 * system.snapshot_nbytes


def test_gpu_checkpoints_past_the_budget_reuse_the_evicted_ones_textures_and_replay_exactly():
    """Once the budget is full, playing on copies each new checkpoint into the textures of the one it
    evicts (no allocation mid-playback), and scrubbing back to it still replays bit for bit."""
    from bench.counting import CountingHost

    counting = CountingHost()
    s = effect_settings({"count": 3000, "turbulence_strength": 2.0})
    system, line = timeline_for(counting, s, budget=0)
    line.budget_bytes, line.on_gpu = 3 * system.snapshot_nbytes, True
    line.seek(10)
    assert sorted(line.checkpoints) == [0, 5, 10]
    textures = {id(t) for c in line.checkpoints.values() for state in c.states for t in state.arrays}
    made = counting.calls["texture"]
    line.seek(27)
    assert sorted(line.checkpoints) == [0, 20, 25] and counting.calls["texture"] == made
    assert {id(t) for c in line.checkpoints.values() for state in c.states for t in state.arrays} == textures
    reference, straight = timeline_for(counting, s, budget=0)
    straight.seek(21)
    line.seek(21)  # back to the reused checkpoint at 20, one step
    for a, b in zip(system.read_state(), reference.read_state()):
        np.testing.assert_array_equal(a, b)


def collision_plane(name="Floor", z=-0.5):
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata([(-5, -5, 0), (5, -5, 0), (5, 5, 0), (-5, 5, 0)], [], [(0, 1, 2, 3)])
    obj = bpy.data.objects.new(name, mesh)
    obj.location = (0, 0, z)
    bpy.context.scene.collection.objects.link(obj)
    obj.modifiers.new("Collision", "COLLISION")
    obj.collision.damping_factor = 0.5
    obj.collision.friction_factor = 0.2
    return obj


def test_scene_fields_colliders_and_mesh_emitter(scene):
    from addon.scene.inputs import colliders, force_fields
    from addon.scene.renderer import SceneRenderer

    bpy.ops.mesh.primitive_cube_add(size=0.5, location=(0, 0, 1))
    cube = bpy.context.active_object
    add_effect(count=4000, emitter_shape="MESH", normal_velocity=2.0, velocity=(0, 0, 0), velocity_random=0.0,
               preroll=0.0)
    floor = collision_plane()
    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.3, location=(2, 0, 0))
    ball = bpy.context.active_object
    ball.modifiers.new("Collision", "COLLISION")
    for frame, x in ((1, 2.0), (4, 0.5)):  # an animated collider
        ball.location.x = x
        ball.keyframe_insert("location", frame=frame)
    bpy.ops.mesh.primitive_monkey_add(location=(-3, 0, 0))
    bpy.context.active_object.modifiers.new("Collision", "COLLISION")
    bpy.context.active_object.gpu_particles_collider.resolution = 32  # an SDF collider, fast on llvmpipe
    bpy.ops.object.effector_add(type="WIND", location=(0, 0, 0))
    bpy.context.active_object.field.strength = 5.0
    bpy.ops.object.effector_add(type="MAGNET")

    fields, field_warnings = force_fields(scene)
    assert [f.type for f in fields] == ["WIND"] and "Magnet" in field_warnings[0]
    found, meshes, collider_warnings = colliders(scene)
    assert sorted(c.type for c in found) == ["PLANE", "SDF", "SPHERE"]
    assert not collider_warnings and [m.name for m in meshes] == ["Suzanne"]
    plane = next(c for c in found if c.type == "PLANE")
    assert plane.bounce == pytest.approx(0.5) and plane.friction == pytest.approx(0.2)

    renderer = SceneRenderer(scene, 32, 18)
    assert len(renderer.warnings) == 1
    renderer.advance_to(4)
    pos_age, vel_life = renderer.simulation.systems[0].read_state()
    particle = PARTICLE.read_images(pos_age, vel_life)
    alive = (particle["age"] >= 0) & (particle["life"] > 0)
    assert alive.sum() > 100 and np.isfinite(pos_age).all()
    assert (particle["position"][alive, 2] >= floor.location.z - 1e-5).all(), "nothing falls through the floor"
    moving = next(c for c in renderer.simulation.systems[0].colliders if c.name == ball.name)
    assert moving.previous is not None and moving.previous[0, 3] > moving.matrix[0, 3], "read with last frame's pose"
    # The emitter mesh: the newest particles are within one frame's flight of the cube's surface.
    newest = alive & (particle["age"] < DT)
    distance = np.abs(particle["position"][newest] - np.array(cube.location)).max(axis=1)
    assert newest.sum() > 10 and np.abs(distance - 0.25).max() < DT * 2.5

    # Settings changed: the renderer rebuilds and re-simulates from the start.
    cube.gpu_particles.active_effect.emitter_shape = "BOX"
    renderer.advance_to(2)
    assert renderer.simulation.systems[0].settings.emitter_shape == "BOX"

    # The emitter deleted: its effect stops with a warning, no crash.
    bpy.data.objects.remove(cube)
    renderer.advance_to(3)
    assert renderer.simulation.systems == [] and "emitter 'Cube' was deleted" in renderer.warnings[0]


def test_mesh_emitter_without_faces_fails_the_bake_clearly(scene):
    mesh = bpy.data.meshes.new("Points")
    mesh.from_pydata([(0, 0, 0), (1, 0, 0)], [], [])
    obj = bpy.data.objects.new("Points", mesh)
    scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    add_effect(count=100, emitter_shape="MESH")
    with pytest.raises(RuntimeError, match="'Points' has no faces"):
        bpy.ops.gpu_particles.bake()


def test_mesh_shape_on_an_empty_fails_the_bake_clearly(scene):
    add_effect(count=100, emitter_shape="MESH")  # the scene's emitter is an empty
    with pytest.raises(RuntimeError, match="'Emitter' \\(Empty\\) has no surface"):
        bpy.ops.gpu_particles.bake()
