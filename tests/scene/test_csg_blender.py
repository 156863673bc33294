"""The CSG point cloud in a Blender module session: export operator, bake, bad input."""

import bpy
import numpy as np
import pytest

from addon.engine.simulate import csg
from addon.scene.csg import add_stage_primitives, scene_primitives

STAGE = {
    "samples_per_primitive": 3000,
    "capacity": 20000,
    "brightness": 2.0,
    "size": 0.02,
    "primitives": [
        {"name": "Ball", "location": [0, 0, 1], "radius": 1.0, "color": [1, 0, 0]},
        {"name": "Cut", "shape": "BOX", "mode": "SUBTRACT", "location": [0.8, -0.8, 1.5], "radius": 0.5},
    ],
}


def cloud_stage(scene, **changes):
    add_stage_primitives(scene, {**STAGE, **changes})


def test_objects_become_primitives_in_order(scene):
    cloud_stage(scene)
    bpy.data.objects["Ball"].scale = (1, 2, 1)
    bpy.context.view_layer.update()
    primitives = scene_primitives(scene)
    assert [p.name for p in primitives] == ["Ball", "Cut"]
    assert primitives[0].size == (2.0, 2.0, 2.0) and primitives[1].mode == "SUBTRACT"


def test_export_point_cloud_matches_the_engine(scene, host):
    cloud_stage(scene)
    assert bpy.ops.gpu_particles.csg_export() == {"FINISHED"}
    obj = bpy.context.active_object
    assert obj.type == "POINTCLOUD"
    reference = csg.PointCloud(host, 20000, 3000)
    reference.update(scene_primitives(scene))
    pos, attr = reference.read()
    points = obj.data
    assert len(points.points) == len(pos) > 3000
    got = np.zeros(len(pos) * 3, np.float32)
    points.attributes["position"].data.foreach_get("vector", got)
    np.testing.assert_array_equal(got.reshape(-1, 3), pos[:, :3])
    colors = np.zeros(len(pos) * 4, np.float32)
    points.attributes["Color"].data.foreach_get("color", colors)
    np.testing.assert_allclose(colors.reshape(-1, 4)[:, :3], csg.unpack_colors(attr))
    assert "normal" in points.attributes


def test_export_with_only_a_subtractive_primitive_is_refused(scene):
    cloud_stage(scene, primitives=[{"name": "Hole", "mode": "SUBTRACT"}])
    with pytest.raises(RuntimeError, match="no surface samples"):
        bpy.ops.gpu_particles.csg_export()
    assert not [o for o in bpy.data.objects if o.type == "POINTCLOUD"]


def test_bake_draws_the_cloud_without_particle_effects(scene, tmp_path):
    cloud_stage(scene, noise_amount=0.01)
    assert bpy.ops.gpu_particles.bake() == {"FINISHED"}
    frames = sorted((tmp_path / "frames").glob("f_*.png"))
    assert len(frames) == 4
    image = bpy.data.images.load(str(frames[-1]))
    pixels = np.array(image.pixels[:]).reshape(36, 64, 4)
    assert pixels[..., 0].max() > 0.1


def test_cloud_drawn_as_sprites_covers_more_pixels_than_points(scene, tmp_path):
    """Sprites of Point Size spread each sample's light over its projected disc."""
    cloud_stage(scene, size=0.05)
    scene.frame_end = 1
    scene.gpu_particles.point_filter = "ONE_PIXEL"  # one pixel a point (antialiased points cover 2x2)
    lit = {}
    for particle_type in ("POINT", "SPRITE"):
        scene.gpu_particles_csg.particle_type = particle_type
        scene.gpu_particles_output.bake_path = str(tmp_path / particle_type / "f_####")
        assert bpy.ops.gpu_particles.bake() == {"FINISHED"}
        image = bpy.data.images.load(str(tmp_path / particle_type / "f_0001.png"))
        pixels = np.array(image.pixels[:]).reshape(36, 64, 4)
        lit[particle_type] = int((pixels[..., :3].max(axis=-1) > 0.02).sum())
    assert lit["POINT"] > 0
    assert lit["SPRITE"] > lit["POINT"]


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"primitives": [{"name": "Flat", "radius": 0.0}]}, "CSG point cloud: Flat: size must be positive"),
        ({"primitives": [{"name": "Mirror", "shape": "BOX", "scale": [1, -1, 1]}]}, "Mirror: size must be positive"),
        ({"capacity": 2**31 - 1}, "beyond this GPU's limit"),
    ],
)
def test_bake_refuses_bad_primitives(scene, tmp_path, changes, message):
    cloud_stage(scene, **changes)
    with pytest.raises(RuntimeError, match=message):
        bpy.ops.gpu_particles.bake()
    assert not (tmp_path / "frames").exists() or not list((tmp_path / "frames").glob("*.png"))


def test_bake_reports_too_many_samples_for_the_capacity(scene):
    cloud_stage(scene, capacity=4000)
    with pytest.raises(RuntimeError, match="exceed the capacity"):
        bpy.ops.gpu_particles.bake()


def test_primitive_animated_to_zero_size_stops_the_bake_cleanly(scene, tmp_path):
    cloud_stage(scene)
    ball = bpy.data.objects["Ball"]
    ball.gpu_particles_csg.keyframe_insert("radius", frame=2)
    ball.gpu_particles_csg.radius = 0.0
    ball.gpu_particles_csg.keyframe_insert("radius", frame=3)
    ball.gpu_particles_csg.radius = 1.0
    with pytest.raises(RuntimeError, match="Frame 3: Ball: size must be positive"):
        bpy.ops.gpu_particles.bake()
    assert len(list((tmp_path / "frames").glob("f_*.png"))) == 2, "frames before the error stay"


def test_bake_sidecar_reports_live_particles_and_samples(scene, tmp_path):
    import json

    from tests.conftest import add_effect

    cloud_stage(scene, primitives=[{"name": "Hole", "mode": "SUBTRACT"}, *STAGE["primitives"]])
    add_effect(count=3000)
    assert bpy.ops.gpu_particles.bake() == {"FINISHED"}
    stats = json.loads((tmp_path / "frames" / "gpu_particles_bake.json").read_text())["last_frame"]
    assert 0 < stats["live_particles"][0] <= 3000
    assert stats["csg_samples"] > 3000
    assert "Hole subtracts from nothing" in stats["csg_warnings"][0]


def test_export_reports_a_bad_primitive(scene):
    cloud_stage(scene, primitives=[{"name": "Flat", "radius": -1.0}])
    with pytest.raises(RuntimeError, match="Flat: size must be positive"):
        bpy.ops.gpu_particles.csg_export()
