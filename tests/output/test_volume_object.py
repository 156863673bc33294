"""Add to Scene's Volume (output/volume_object.py): a Volume object playing a .vdb sequence with Blender's own
features, and Cycles rendering it lit by a sun, shadowing the plane beneath it."""

import bpy
import numpy as np
import pytest
from bpy_extras.object_utils import world_to_camera_view

from addon.engine.light import volume_grids
from addon.engine.look.look import LOOK_SIZE, look_table
from addon.engine.settings.settings import effect_settings
from addon.engine.simulate import simulation
from addon.output import volumes
from addon.output.volume_object import add_volume_object

SIZE = 48


def cloud_frames(host, folder, frames=(3, 4, 5)):
    """A lit ball of smoke (radius 0.5 at z = 1.5) written as the .vdb frames ``frames``; its settings."""
    rng = np.random.default_rng(5)
    n = 20000
    settings = effect_settings({"count": n, "size": 0.08, "lifetime": 10.0, "lighting": "LIT", "density": 4.0,
                                "albedo": (0.9, 0.6, 0.3)})
    system = simulation.ParticleSystem(host, settings)
    direction = rng.normal(size=(n, 3))
    ball = direction / np.linalg.norm(direction, axis=1)[:, None] * rng.random((n, 1)) ** (1 / 3) * 0.45
    pos_age = np.concatenate([ball + (0.0, 0.0, 1.5), np.ones((n, 1))], axis=1).astype(np.float32)
    vel_life = np.concatenate([np.tile((2.0, 0.0, 0.0), (n, 1)), np.full((n, 1), 10.0)], axis=1).astype(np.float32)
    system.write_state(pos_age, vel_life)
    look = host.texture("look", LOOK_SIZE, 1, "RGBA32F", look_table(settings))
    captured = volumes.effect_volume(volume_grids.VolumeGrids(host), system, look, "Smoke", 0.05)
    folder.mkdir()
    for frame in frames:
        volumes.write(folder / f"f_{frame:04d}.vdb", [captured])
    return settings


def render_scene(tmp_path):
    """A factory-empty scene: a plane at z = 0, a sun straight down, a black world, a camera; Cycles on the CPU."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    bpy.ops.mesh.primitive_plane_add(size=8.0)
    sun = bpy.data.objects.new("Sun", bpy.data.lights.new("Sun", "SUN"))
    sun.data.energy = 3.0
    sun.data.angle = 0.0
    scene.collection.objects.link(sun)
    camera = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    camera.location = (0.0, -6.0, 3.0)
    camera.rotation_euler = (np.radians(68.0), 0.0, 0.0)
    scene.collection.objects.link(camera)
    scene.camera = camera
    scene.world = None  # black
    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.samples = 16
    scene.cycles.use_denoising = False
    scene.render.resolution_x = scene.render.resolution_y = SIZE
    scene.render.image_settings.file_format = "OPEN_EXR"
    scene.view_settings.view_transform = "Standard"
    return scene


def render(scene, path):
    scene.render.filepath = str(path)
    bpy.ops.render.render(write_still=True)
    image = bpy.data.images.load(str(path))
    pixels = np.array(image.pixels[:], np.float32).reshape(SIZE, SIZE, 4)[..., :3]
    bpy.data.images.remove(image)
    return pixels


def pixel(scene, point):
    """(row, column) of a world point in the rendered image (rows from the bottom, as Blender stores them)."""
    from mathutils import Vector

    at = world_to_camera_view(scene, scene.camera, Vector(point))
    return int(at.y * SIZE), int(at.x * SIZE)


def patch(pixels, at, reach=2):
    return pixels[at[0] - reach:at[0] + reach + 1, at[1] - reach:at[1] + reach + 1].mean()


def test_the_volume_object_plays_the_sequence_with_its_grids(host, tmp_path):
    from mathutils import Vector

    settings = cloud_frames(host, tmp_path / "volumes")
    scene = render_scene(tmp_path)
    obj = add_volume_object(scene, tmp_path / "volumes", "Smoke", settings=settings)
    volume = obj.data
    assert volume.is_sequence and volume.frame_start == 3 and volume.frame_duration == 3
    assert volume.frame_offset == 2 and volume.velocity_grid == "velocity" and volume.velocity_unit == "SECOND"
    scene.frame_set(4)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph).data
    assert evaluated.grids.load(), evaluated.grids.error_message
    assert evaluated.grids.frame_filepath.endswith("f_0004.vdb")
    assert {grid.name for grid in evaluated.grids} == {"density", "emission", "velocity"}
    corners = [obj.matrix_world @ Vector(corner) for corner in obj.bound_box]
    low, high = np.min(corners, axis=0), np.max(corners, axis=0)
    # around the ball (radius 0.5 at z = 1.5), out to whole leaves (8 voxels: 0.4)
    assert (low <= (-0.3, -0.3, 1.2)).all() and (high >= (0.3, 0.3, 1.8)).all()
    assert (low >= (-1.0, -1.0, 0.5)).all() and (high <= (1.0, 1.0, 2.5)).all()
    shader = volume.materials[0].node_tree.nodes["Principled Volume"]
    assert shader.inputs["Density Attribute"].default_value == "density"
    assert tuple(shader.inputs["Color"].default_value)[:3] == pytest.approx((0.9, 0.6, 0.3))
    assert shader.inputs["Emission Color"].links[0].from_node.attribute_name == "emission"


def test_cycles_renders_the_volume_lit_and_shadowing_the_plane_beneath(host, tmp_path):
    settings = cloud_frames(host, tmp_path / "volumes", frames=(1,))
    scene = render_scene(tmp_path)
    obj = add_volume_object(scene, tmp_path / "volumes", "Smoke", settings=settings)
    scene.frame_set(1)
    with_volume = render(scene, tmp_path / "with.exr")
    obj.hide_render = True
    without = render(scene, tmp_path / "without.exr")
    shadow, cloud, lit_floor = pixel(scene, (0, 0, 0)), pixel(scene, (0, 0, 1.5)), pixel(scene, (2.5, 0, 0))
    # The smoke (a lit effect: no emission) is lit by the sun: the world is black, the sky behind it too (measured
    # 0.03 at 16 samples: dense smoke, optical depth about 8 across) ...
    assert patch(without, cloud) == 0.0 and patch(with_volume, cloud) > 0.01
    # ... and shadows the plane beneath it (measured 0.08 against 0.72), while the plane away from it is lit the same
    assert patch(with_volume, shadow) < 0.6 * patch(without, shadow)
    assert patch(with_volume, lit_floor) == pytest.approx(patch(without, lit_floor), rel=0.1)
