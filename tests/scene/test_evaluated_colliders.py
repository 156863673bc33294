"""Colliders read from their evaluated geometry: a Geometry Nodes collider (an empty mesh a modifier builds on)
collides as what it builds, and a collider with no faces, or one that cannot be read, is skipped with a message
naming it while every other collider and effect, in every output, goes on."""

import os
import subprocess
import sys
from pathlib import Path

import bpy
import numpy as np
import pytest

from addon.engine.seam.records import PARTICLE
from addon.scene import inputs
from addon.scene.renderer import SceneRenderer
from addon.ui import panels
from tests.scene.test_sdf_blender import rain, with_collision
from tests.ui.test_panels import draw

ROOT = Path(__file__).resolve().parents[2]


def node_collider(name, node_type, collision=None, **inputs_):
    """An empty mesh object whose Geometry Nodes modifier outputs one ``node_type`` node's mesh (its inputs set
    as given), with Collision physics (``collision``: its settings)."""
    tree = bpy.data.node_groups.new(name, "GeometryNodeTree")
    tree.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    node = tree.nodes.new(node_type)
    for socket, value in inputs_.items():
        node.inputs[socket].default_value = value
    tree.links.new(node.outputs["Mesh"], tree.nodes.new("NodeGroupOutput").inputs[0])
    obj = bpy.data.objects.new(name, bpy.data.meshes.new(name))
    bpy.context.scene.collection.objects.link(obj)
    obj.modifiers.new("Nodes", "NODES").node_group = tree
    return with_collision(obj, **collision or {})


def instances_collider(name):
    """An empty mesh object whose Geometry Nodes put a cube instance on a point (instances, no realized mesh),
    with Collision physics."""
    tree = bpy.data.node_groups.new(name, "GeometryNodeTree")
    tree.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    nodes, links = tree.nodes, tree.links
    instance = nodes.new("GeometryNodeInstanceOnPoints")
    links.new(nodes.new("GeometryNodePoints").outputs["Points"], instance.inputs["Points"])
    links.new(nodes.new("GeometryNodeMeshCube").outputs["Mesh"], instance.inputs["Instance"])
    links.new(instance.outputs["Instances"], nodes.new("NodeGroupOutput").inputs[0])
    obj = bpy.data.objects.new(name, bpy.data.meshes.new(name))
    bpy.context.scene.collection.objects.link(obj)
    obj.modifiers.new("Nodes", "NODES").node_group = tree
    return with_collision(obj)


def edges_collider(name):
    """A mesh of two edges and no faces (``from_pydata`` stores no face corners at all), with Collision physics."""
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata([(-1.0, 0.0, 0.5), (0.0, 0.0, 0.5), (1.0, 0.0, 0.5)], [(0, 1), (1, 2)], [])
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    return with_collision(obj)


STILL = {"damping_factor": 1.0}  # no bounce: what lands on a collider rests there


def cube_collider(name, size=2.0, location=(0.0, 0.0, 0.0)):
    """Blender's cube with Collision physics that stops what lands on it."""
    bpy.ops.mesh.primitive_cube_add(size=size, location=location)
    bpy.context.object.name = name
    return with_collision(bpy.context.object, **STILL)


def faceless_scene(scene, count=3000, frames=(1, 4)):
    """Rain over a 2 m cube whose top is at z = 0, beside an edges-only collider and Geometry Nodes colliders
    that make a line (edges, no faces), a lone vertex and an instance; the emitter stays the active object."""
    rain(scene, count=count, frames=frames)
    emitter = bpy.context.view_layer.objects.active
    cube_collider("Ground Cube", location=(0.0, 0.0, -1.0))
    edges_collider("Edges Only")
    node_collider("GN Line", "GeometryNodeMeshLine", Count=4)
    node_collider("GN Nothing", "GeometryNodeMeshCube", **{"Size": (0.0, 0.0, 0.0), "Vertices X": 1,
                                                            "Vertices Y": 1, "Vertices Z": 1})
    instances_collider("GN Instances")
    bpy.context.view_layer.objects.active = emitter
    bpy.context.view_layer.update()
    return emitter


FACELESS = ("'Edges Only' has no faces: ", "'GN Line' has no faces (", "'GN Nothing' has no faces (",
            "'GN Instances' has no faces (its Geometry Nodes make none; instances collide once realized): ")


def assert_held_by_the_cube(pos_age, vel_life, top=0.0, half=1.0):
    """No live particle over the cube's top sank into it, and some landed on it."""
    particle = PARTICLE.read_images(pos_age, vel_life)
    alive = (particle["age"] >= 0) & (particle["life"] > 0)
    over = alive & np.all(np.abs(particle["position"][:, :2]) < half * 0.95, axis=1)
    assert over.sum() > 50, "particles fall on the cube"
    height = particle["position"][over, 2]
    assert (height > top - 0.01).all(), f"{(height <= top - 0.01).sum()} sank into the cube"
    assert (height < top + 0.1).sum() > 50, "some rest on its top"


def state_at(scene, frame):
    renderer = SceneRenderer(scene, 16, 16)
    renderer.advance_to(frame)
    return renderer, renderer.simulation.systems[0].read_state()


def test_a_geometry_nodes_cube_stops_particles_like_an_ordinary_cube(scene):
    rain(scene, count=5000, frames=(1, 20))
    emitter = bpy.context.view_layer.objects.active
    built = node_collider("GN Cube", "GeometryNodeMeshCube", STILL, Size=(2.0, 2.0, 2.0))
    assert len(built.data.vertices) == 0, "the original mesh is empty: the modifier makes the cube"
    built.location.z = -1.0
    bpy.context.view_layer.objects.active = emitter
    renderer, from_nodes = state_at(scene, 20)
    (collider,) = renderer.simulation.systems[0].colliders
    assert (collider.name, collider.type, collider.half_size) == ("GN Cube", "BOX", (1.0, 1.0, 1.0))
    assert not renderer.warnings
    assert_held_by_the_cube(*from_nodes)
    bpy.data.objects.remove(built)
    cube_collider("Mesh Cube", location=(0.0, 0.0, -1.0))
    bpy.context.view_layer.objects.active = emitter
    _, from_mesh = state_at(scene, 20)
    for a, b in zip(from_nodes, from_mesh, strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_geometry_nodes_collider_follows_its_nodes_frame_by_frame(scene):
    """The evaluated mesh keys the collider: a cube whose size is keyed grows in the simulation too."""
    rain(scene, count=1000, frames=(1, 3))
    built = node_collider("Growing", "GeometryNodeMeshCube")
    size = built.modifiers["Nodes"].node_group.nodes["Cube"].inputs["Size"]
    for frame, value in ((1, 1.0), (3, 3.0)):
        size.default_value = (value,) * 3
        size.keyframe_insert("default_value", frame=frame)
    halves = []
    for frame in (1, 2, 3):
        scene.frame_set(frame)
        (collider,), _, _ = inputs.colliders(scene, depsgraph=bpy.context.evaluated_depsgraph_get())
        halves.append(collider.half_size[0])
    assert halves[0] == pytest.approx(0.5) and halves[2] == pytest.approx(1.5) and halves[0] < halves[1] < halves[2]


def test_a_collider_reading_is_kept_until_its_evaluated_mesh_changes(scene):
    """Read twice at a frame, a Geometry Nodes cube is analysed once; a changed node input is a new mesh at the
    same frame (only the modifier changed: the original mesh stays empty)."""
    built = node_collider("Kept", "GeometryNodeMeshCube")
    bpy.context.view_layer.update()
    depsgraph = bpy.context.evaluated_depsgraph_get()
    first = inputs.KEPT_SHAPES.shape(built, scene.frame_current, depsgraph)
    assert inputs.KEPT_SHAPES.shape(built, scene.frame_current, depsgraph) is first
    built.modifiers["Nodes"].node_group.nodes["Cube"].inputs["Size"].default_value = (3.0, 3.0, 3.0)
    bpy.context.view_layer.update()
    changed = inputs.KEPT_SHAPES.shape(built, scene.frame_current, depsgraph)
    assert changed is not first and tuple(changed[0][2]) == pytest.approx((1.5, 1.5, 1.5))


def test_faceless_colliders_are_skipped_with_their_names_and_the_cube_still_holds_the_rain(scene):
    faceless_scene(scene, count=5000, frames=(1, 20))
    renderer, state = state_at(scene, 20)
    messages = " | ".join(renderer.warnings)
    for expected in FACELESS:
        assert expected in messages
    assert [c.name for c in renderer.simulation.systems[0].colliders] == ["Ground Cube"]
    assert_held_by_the_cube(*state)


def test_a_collider_that_cannot_be_read_is_named_and_the_others_still_collide(scene, monkeypatch):
    faceless_scene(scene)
    broken = cube_collider("Broken", location=(4.0, 0.0, 0.0))
    read = inputs.evaluated_triangles

    def fails_on_broken(obj, depsgraph):
        if obj.name == broken.name:
            raise RuntimeError("Error: Object does not have geometry data")
        return read(obj, depsgraph)

    monkeypatch.setattr(inputs, "evaluated_triangles", fails_on_broken)
    found, _, warnings = inputs.colliders(scene, depsgraph=bpy.context.evaluated_depsgraph_get())
    assert [c.name for c in found] == ["Ground Cube"]
    assert ("collider 'Broken' cannot be read (RuntimeError: Error: Object does not have geometry data): "
            "GPU particles ignore it") in warnings


def lit_pixels(path):
    image = bpy.data.images.load(str(path), check_existing=False)
    try:
        return int((np.array(image.pixels[:], np.float32).reshape(-1, 4)[:, :3].max(axis=1) > 0.05).sum())
    finally:
        bpy.data.images.remove(image)


def test_the_bake_with_faceless_colliders_writes_frames_with_particles(scene, tmp_path):
    faceless_scene(scene)
    assert bpy.ops.gpu_particles.bake() == {"FINISHED"}
    frames = sorted((tmp_path / "frames").glob("f_*.png"))
    assert len(frames) == 4 and all(lit_pixels(frame) > 5 for frame in frames)


def test_export_point_cloud_with_faceless_colliders_exports_the_particles(scene):
    faceless_scene(scene)
    scene.frame_set(3)
    assert bpy.ops.gpu_particles.export_pointcloud() == {"FINISHED"}
    assert len(bpy.data.objects["GPU Particles 0003"].data.points) > 100


def test_bake_simulation_with_faceless_colliders_fills_the_cache(scene, tmp_path):
    faceless_scene(scene)
    scene.gpu_particles.cache_directory = str(tmp_path / "cache")
    scene.gpu_particles.cache_interval = 2
    assert bpy.ops.gpu_particles.bake_simulation() == {"FINISHED"}
    renderer, _ = state_at(scene, 4)
    assert renderer.simulation.timeline.steps_run == 1, "frame 3 restored from the cache, one step to 4"


def test_the_viewport_overlay_draws_the_particles_past_faceless_colliders(scene):
    from addon import viewport
    from addon.scene.renderer import camera_of
    from tests.scene.test_viewport import H, W, draw_offscreen, live_positions, projected_pixels

    faceless_scene(scene)
    viewport.free()
    overlay = viewport.overlay()
    try:
        scene.frame_set(4)
        view_proj = camera_of(scene, W, H).view_proj
        pixels = draw_offscreen(scene, view_proj)
        lit = {(int(x), int(y)) for y, x in zip(*np.nonzero(pixels[..., :3].max(axis=-1) > 0))}
        assert len(lit) > 20 and lit <= projected_pixels(view_proj, live_positions(overlay), W, H)
        messages = " | ".join(overlay.renderer.warnings)
        assert all(expected in messages for expected in FACELESS)
    finally:
        viewport.free()


def test_the_collision_panel_lists_the_cube_and_names_the_faceless_colliders(scene):
    faceless_scene(scene)
    node_collider("GN Cube", "GeometryNodeMeshCube", Size=(2.0, 2.0, 2.0)).location.x = 5.0
    bpy.context.view_layer.update()  # as Blender evaluates an edit before it redraws the sidebar
    collision = dict(zip([t for t, _ in panels.SECTIONS], panels.SECTION_PANELS))["Collision"]
    labels = [text for kind, text, *_ in draw(collision) if kind == "label"]
    assert labels[:2] == ["Ground Cube: box, bounce 0.00, friction 0.00", "GN Cube: box, bounce 1.00, friction 0.00"]
    assert all(any(label.startswith(f"collider {name}") and label.endswith("GPU particles ignore it")
                   for label in labels) for name in FACELESS)
    bpy.context.view_layer.objects.active = bpy.data.objects["GN Line"]
    assert ("prop", bpy.data.objects["GN Line"].gpu_particles_collider, "resolution") in draw(
        panels.GPU_PARTICLES_PT_collider)


def test_a_saved_geometry_nodes_collider_bakes_the_same_in_a_fresh_blender(scene, tmp_path):
    """A farm worker opens the .blend and bakes: the collider's evaluated cube is there before the first frame."""
    faceless_scene(scene, count=3000, frames=(1, 6)).location.z = 0.5  # the rain lands from frame 4
    bpy.data.objects.remove(bpy.data.objects["Ground Cube"])
    node_collider("GN Cube", "GeometryNodeMeshCube", STILL, Size=(2.0, 2.0, 2.0)).location.z = -1.0
    bpy.context.view_layer.objects.active = bpy.data.objects["Emitter"]
    assert bpy.ops.gpu_particles.bake() == {"FINISHED"}
    scene.gpu_particles_output.bake_path = "//fresh/f_####"
    blendfile = tmp_path / "shot.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blendfile), copy=True)
    script = ("import sys, bpy, gpu; gpu.init(); sys.path.insert(0, sys.argv[-2]); import addon; addon.register(); "
              "bpy.ops.wm.open_mainfile(filepath=sys.argv[-1]); assert bpy.ops.gpu_particles.bake() == {'FINISHED'}")
    result = subprocess.run([sys.executable, "-c", script, str(ROOT), str(blendfile)], cwd=ROOT, env=dict(os.environ),
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    here, fresh = (sorted((tmp_path / name).glob("f_*.png")) for name in ("frames", "fresh"))
    assert [p.name for p in fresh] == [p.name for p in here] and len(here) == 6
    for a, b in zip(here, fresh, strict=True):
        assert a.read_bytes() == b.read_bytes(), f"{a.name} differs"
