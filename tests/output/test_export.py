"""PointCloud export: counts, attributes, the per-frame cache, and a render through Cycles."""

import bpy
import numpy as np
import pytest

from addon.engine.seam.records import PARTICLE
from addon.output.export import COLOR_ATTRIBUTE, MATERIAL_NAME
from addon.scene.renderer import SceneRenderer
from tests.conftest import add_effect


def simulated_state(scene, frame):
    renderer = SceneRenderer(scene, 1, 1)
    renderer.advance_to(frame)
    return [(system.settings, *system.read_state(), system.live.read_count()) for system in renderer.simulation.systems]


def attribute(cloud, name, prop, width):
    data = np.empty(len(cloud.points) * width, np.float32)
    cloud.attributes[name].data.foreach_get(prop, data)
    return data.reshape(-1, width) if width > 1 else data


def test_export_current_frame(scene):
    add_effect(count=3000, size=0.02, emission_strength=2.0)
    scene.frame_set(3)
    assert bpy.ops.gpu_particles.export_pointcloud() == {"FINISHED"}
    obj = bpy.data.objects["GPU Particles 0003"]
    assert obj.type == "POINTCLOUD" and obj.data.materials[0].name == MATERIAL_NAME
    (settings, pos_age, vel_life, live_count), = simulated_state(scene, 3)
    particle = PARTICLE.read_images(pos_age, vel_life)
    live = (particle["age"] >= 0) & (particle["age"] < particle["life"])
    cloud = obj.data
    assert len(cloud.points) == live_count == live.sum() > 100
    np.testing.assert_array_equal(attribute(cloud, "position", "vector", 3), particle["position"][live])
    np.testing.assert_allclose(attribute(cloud, "radius", "value", 1), 0.02)
    t = (particle["age"][live] / particle["life"][live])[:, None]
    start, end = np.array(settings.color_start), np.array(settings.color_end)
    expected = (start + (end - start) * t) * 2.0
    colors = attribute(cloud, COLOR_ATTRIBUTE, "color", 4)
    np.testing.assert_allclose(colors[:, :3], expected, rtol=1e-5)
    assert (colors[:, 3] == 1).all()
    assert scene.frame_current == 3


def test_export_sums_every_effect(scene):
    add_effect(count=1000)
    add_effect(count=2000, seed=3)
    scene.frame_set(4)
    bpy.ops.gpu_particles.export_pointcloud()
    expected = sum(live_count for *_, live_count in simulated_state(scene, 4))
    assert len(bpy.data.objects["GPU Particles 0004"].data.points) == expected


def test_export_range_is_a_point_cache(scene):
    add_effect(count=2000)
    scene.frame_set(2)
    assert bpy.ops.gpu_particles.export_pointcloud(frame_range=True) == {"FINISHED"}
    cache = bpy.data.collections["GPU Particles Cache"]
    names = sorted(obj.name for obj in cache.objects)
    assert names == [f"GPU Particles {n:04d}" for n in range(1, 5)]
    counts = [len(bpy.data.objects[name].data.points) for name in names]
    assert counts == sorted(counts) and counts[0] < counts[-1], "a continuous effect fills up over time"
    assert scene.frame_current == 2
    for frame in range(1, 5):
        scene.frame_set(frame)
        shown = [obj.name for obj in cache.objects if not obj.hide_render]
        assert shown == [f"GPU Particles {frame:04d}"]


def test_export_without_effects_reports(scene):
    with pytest.raises(RuntimeError, match="No enabled GPU Particles effects"):
        bpy.ops.gpu_particles.export_pointcloud()
    assert not any(obj.type == "POINTCLOUD" for obj in bpy.data.objects)


def test_cycles_renders_the_exported_points(scene, tmp_path):
    add_effect(count=3000, size=0.3, emission_strength=4.0)
    scene.frame_set(4)
    bpy.ops.gpu_particles.export_pointcloud()
    scene.gpu_particles_output.use_render = False  # the exported points alone, not the composited layer
    scene.render.engine = "CYCLES"
    scene.cycles.samples = 4
    scene.cycles.device = "CPU"
    scene.render.resolution_x, scene.render.resolution_y = 32, 18
    scene.render.filepath = str(tmp_path / "cycles.png")
    bpy.ops.render.render(write_still=True)
    image = bpy.data.images.load(str(tmp_path / "cycles.png"))
    pixels = np.array(image.pixels[:]).reshape(18, 32, -1)
    assert pixels[..., :3].max() > 0.2, "the points render"
    bpy.data.objects.remove(bpy.data.objects["GPU Particles 0004"])
    bpy.ops.render.render(write_still=True)
    empty = np.array(bpy.data.images.load(str(tmp_path / "cycles.png"), check_existing=False).pixels[:])
    assert empty.reshape(18, 32, -1)[..., :3].max() < 0.05, "and nothing else in the scene does"


def test_export_follows_the_look_over_life_and_randomness(scene):
    """Radius and color per point as the splat's look gives them (size_end, color and size randomness)."""
    from addon.engine.look.look import look_table
    from addon.engine.reference.draw.compositing import look_at, variation

    add_effect(count=3000, size=0.02, size_end=0.25, color_random=0.6, size_random=0.5, emission_strength=3.0)
    scene.frame_set(4)
    bpy.ops.gpu_particles.export_pointcloud()
    cloud = bpy.data.objects["GPU Particles 0004"].data
    (settings, pos_age, vel_life, _), = simulated_state(scene, 4)
    particle = PARTICLE.read_images(pos_age, vel_life)
    live = np.flatnonzero((particle["age"] >= 0) & (particle["age"] < particle["life"]))
    look = look_at(look_table(settings), particle["age"][live] / particle["life"][live])
    radii = attribute(cloud, "radius", "value", 1)
    np.testing.assert_allclose(radii, 0.02 * look[:, 3] * variation(live, 0.5, settings.seed, "SIZE"), rtol=1e-5)
    assert radii.min() < 0.02 * 0.6 and radii.max() <= 0.02
    colors = attribute(cloud, COLOR_ATTRIBUTE, "color", 4)[:, :3]
    expected = look[:, :3] * (3.0 * variation(live, 0.6, settings.seed, "BRIGHTNESS"))[:, None]
    np.testing.assert_allclose(colors, expected, rtol=1e-5)
