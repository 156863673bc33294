"""Point caches a bake writes beside its frames (output/point_cache.py, output/extras.py)."""

import os

import bpy
import numpy as np
import pytest
from conftest import add_effect


def bake(expect_error=None):
    if expect_error is None:
        assert bpy.ops.gpu_particles.bake() == {"FINISHED"}
        return
    with pytest.raises(RuntimeError, match=expect_error):
        bpy.ops.gpu_particles.bake()


def test_a_bake_with_write_points_writes_one_ply_a_frame_of_the_live_particles(scene, tmp_path):
    from addon.output.export import live_particles
    from addon.output.point_cache import read_ply
    from addon.scene.renderer import SceneRenderer

    add_effect(count=3000)
    scene.gpu_particles_output.write_points = True
    bake()
    points = tmp_path / "frames" / "points"
    assert sorted(os.listdir(points)) == [f"f_{frame:04d}.ply" for frame in range(1, 5)]
    renderer = SceneRenderer(scene, 1, 1)
    renderer.advance_to(4)
    renderer.update_ramps()
    expected = live_particles(renderer.simulation.systems[0])
    records = read_ply(points / "f_0004.ply")
    assert 0 < len(records) == len(expected["id"])
    np.testing.assert_array_equal(np.stack([records[axis] for axis in "xyz"], axis=1), expected["position"])
    np.testing.assert_array_equal(records["id_high"].astype(np.int64) * 65536 + records["id_low"], expected["id"])
    np.testing.assert_array_equal(records["radius"], expected["radius"])


def test_an_unwritable_point_cache_folder_is_refused_before_anything_is_simulated(scene, tmp_path, monkeypatch):
    from addon.scene import renderer

    add_effect(count=1000)
    scene.gpu_particles_output.write_points = True
    (tmp_path / "frames").mkdir()
    (tmp_path / "frames" / "points").write_text("a file where the folder should be")
    monkeypatch.setattr(renderer.SceneRenderer, "__init__", lambda *args, **kwargs: pytest.fail("simulated"))
    bake(expect_error="frames/points' cannot be created or written")
    assert sorted(os.listdir(tmp_path / "frames")) == ["points"]


def test_a_disk_filling_mid_sequence_leaves_the_point_caches_before_whole_and_no_partial_file(scene, tmp_path,
                                                                                             monkeypatch):
    from addon.output import point_cache

    add_effect(count=2000)
    scene.frame_end = 6
    scene.gpu_particles_output.write_points = True
    real_write = point_cache.write_ply

    def filling_write(path, records):
        if "f_0003" in path.name:
            path.write_bytes(b"ply\nformat binary_little_endian 1.0\n")
            raise OSError(28, "No space left on device")
        real_write(path, records)

    monkeypatch.setattr(point_cache, "write_ply", filling_write)
    bake(expect_error="Could not write frame 3's point cache to .*f_0003.ply': No space left on device")
    files = sorted(os.listdir(tmp_path / "frames" / "points"))
    assert {"f_0001.ply", "f_0002.ply"} <= set(files)
    assert "f_0003.ply" not in files and not [name for name in files if name.startswith(".")]
    for name in files:
        point_cache.read_ply(tmp_path / "frames" / "points" / name)


def test_a_frame_without_live_particles_writes_an_empty_valid_ply(tmp_path):
    from addon.engine.settings.settings import effect_settings
    from addon.output.point_cache import PLY_DTYPE, read_ply, write

    unborn = np.zeros((100, 4), np.float32)
    unborn[:, 3] = -1.0  # age: not born yet
    for name, captured in (("none.ply", []), ("unborn.ply", [(unborn, np.zeros_like(unborn), effect_settings({}),
                                                             None, 0)])):
        write(tmp_path / name, captured)
        records = read_ply(tmp_path / name)
        assert records.dtype == PLY_DTYPE and len(records) == 0
        assert b"element vertex 0\n" in (tmp_path / name).read_bytes()


# Run in a fresh process where the add-on was never registered: it opens the .blend and writes what Blender's
# evaluation of the cache object gives on each frame (points, positions, ids; instances with Instance on).
WITHOUT_ADDON = """
import sys, bpy, numpy as np
blend, out = sys.argv[-2:]
bpy.ops.wm.open_mainfile(filepath=blend)
assert not hasattr(bpy.types.Scene, "gpu_particles"), "the add-on is registered"
scene, obj = bpy.context.scene, bpy.data.objects["GPU Particles Cache"]
modifier = obj.modifiers["Point Cache"]
found = {}
for frame in (2, 4):
    scene.frame_set(frame)
    geometry = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).evaluated_geometry()
    cloud = geometry.pointcloud
    positions = np.empty(len(cloud.points) * 3, np.float32)
    cloud.attributes["position"].data.foreach_get("vector", positions)
    ids = np.empty(len(cloud.points), np.int32)
    cloud.attributes["id"].data.foreach_get("value", ids)
    found[f"position_{frame}"], found[f"id_{frame}"] = positions.reshape(-1, 3), ids
item = next(i for i in modifier.node_group.interface.items_tree if getattr(i, "name", "") == "Instance")
getattr(modifier.properties.inputs, item.identifier).value = True
obj.update_tag()
scene.frame_set(4)
geometry = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).evaluated_geometry()
found["instances"] = np.array([len(geometry.instances_pointcloud().points), len(geometry.instance_references())])
np.savez(out, **found)
"""


def test_add_to_scene_plays_the_cache_in_blender_without_the_addon_as_the_addons_own_export(scene, tmp_path):
    import subprocess
    import sys

    from addon.output.export import export_frame

    add_effect(count=3000)
    scene.gpu_particles_output.write_points = True
    bake()
    assert bpy.ops.gpu_particles.add_cached_geometry() == {"FINISHED"}
    cube = bpy.data.objects.new("Rock", bpy.data.meshes.new("Rock"))
    scene.collection.objects.link(cube)
    from addon.output.point_cache_nodes import set_input

    set_input(bpy.data.objects["GPU Particles Cache"].modifiers["Point Cache"], "Instance Object", cube)
    blend = tmp_path / "shot.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend), copy=True)
    result = subprocess.run([sys.executable, "-c", WITHOUT_ADDON, str(blend), str(tmp_path / "found.npz")],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    found = np.load(tmp_path / "found.npz")
    for frame in (2, 4):
        scene.frame_set(frame)
        exported = export_frame(scene).data
        count = len(exported.points)
        positions = np.empty(count * 3, np.float32)
        exported.attributes["position"].data.foreach_get("vector", positions)
        ids = np.empty(count, np.int32)
        exported.attributes["id"].data.foreach_get("value", ids)
        assert 0 < count == len(found[f"id_{frame}"])
        np.testing.assert_allclose(found[f"position_{frame}"], positions.reshape(-1, 3), atol=1e-5)
        np.testing.assert_array_equal(found[f"id_{frame}"], ids)
    assert found["instances"][0] == count and found["instances"][1] == 1  # one rock on every live particle


def test_a_moved_cache_folder_empties_the_object_and_the_panel_names_the_folder(scene, tmp_path):
    from addon.ui.add_to_scene import missing_caches

    add_effect(count=1000)
    scene.gpu_particles_output.write_points = True
    bake()
    assert bpy.ops.gpu_particles.add_cached_geometry() == {"FINISHED"}
    obj = bpy.data.objects["GPU Particles Cache"]
    scene.frame_set(3)
    assert len(obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).data.points) > 0
    assert missing_caches(scene) == []
    (tmp_path / "frames" / "points").rename(tmp_path / "moved")
    obj.update_tag()
    scene.frame_set(2)
    assert len(obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).data.points) == 0  # Blender's own way
    assert missing_caches(scene) == [f"GPU Particles Cache: point cache folder '{tmp_path / 'frames' / 'points'}' "
                                     "is missing (moved or deleted?)"]


def test_add_to_scene_without_a_point_cache_says_to_bake_one(scene):
    add_effect(count=1000)
    with pytest.raises(RuntimeError, match="No point cache at .*: bake with Write Point Cache on first"):
        bpy.ops.gpu_particles.add_cached_geometry()
