"""Point caches a bake writes beside its frames (output/point_cache.py, output/extras.py)."""

import os

import bpy
import numpy as np
import pytest

from tests.conftest import add_effect


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

    def filling_write(path, bodies):
        if "f_0003" in path.name:
            path.write_bytes(b"ply\nformat binary_little_endian 1.0\n")
            raise OSError(28, "No space left on device")
        real_write(path, bodies)

    monkeypatch.setattr(point_cache, "write_ply", filling_write)
    bake(expect_error="Could not write frame 3's point cache to .*f_0003.ply': No space left on device")
    files = sorted(os.listdir(tmp_path / "frames" / "points"))
    assert {"f_0001.ply", "f_0002.ply"} <= set(files)
    assert "f_0003.ply" not in files and not [name for name in files if name.startswith(".")]
    for name in files:
        point_cache.read_ply(tmp_path / "frames" / "points" / name)


def test_a_frame_without_live_particles_writes_an_empty_valid_ply(host, rng, tmp_path):
    from addon.engine.look.point_records import PointRecords
    from addon.engine.seam.records import PARTICLE
    from addon.output.point_cache import PLY_DTYPE, read_ply, write
    from tests.engine.look.test_point_records import spinning_effect

    system, look = spinning_effect(host, rng, 100)
    pos_age, vel_life = system.read_state()
    PARTICLE.read_images(pos_age, vel_life)["age"][:] = -1.0  # not born yet
    system.write_state(pos_age, vel_life)
    records = PointRecords(host, system)
    records.pack(system, look, first_id=0)
    for name, captured in (("none.ply", []), ("unborn.ply", [records.read()])):
        write(tmp_path / name, captured)
        records_read = read_ply(tmp_path / name)
        assert records_read.dtype == PLY_DTYPE and len(records_read) == 0
        assert b"element vertex 0\n" in (tmp_path / name).read_bytes()


def test_a_bakes_point_cache_is_the_numpy_records_byte_for_byte(scene, tmp_path):
    """The GPU's body against the numpy reference's records of the same frame's state, header and all."""
    from addon.output.export import scene_particles, system_states
    from addon.output.point_cache import ply_records, write_ply
    from addon.scene.renderer import SceneRenderer

    add_effect(count=3000)
    add_effect(count=1000, color_random=0.5, size_random=0.4, spin=3.0)  # a second system: ids past the first's
    scene.gpu_particles_output.write_points = True
    bake()
    renderer = SceneRenderer(scene, 1, 1)
    renderer.advance_to(3)
    renderer.update_ramps()
    write_ply(tmp_path / "numpy.ply", [ply_records(scene_particles(system_states(renderer)))])
    assert (tmp_path / "frames" / "points" / "f_0003.ply").read_bytes() == (tmp_path / "numpy.ply").read_bytes()


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


def test_add_to_scene_plays_frame_names_with_text_after_the_number(scene, tmp_path):
    from addon.output.point_cache import read_ply

    add_effect(count=1000)
    scene.gpu_particles_output.write_points = True
    scene.gpu_particles_output.bake_path = str(tmp_path / "frames" / "shot_###_v2")
    bake()
    assert bpy.ops.gpu_particles.add_cached_geometry() == {"FINISHED"}
    scene.frame_set(3)
    cloud = bpy.data.objects["GPU Particles Cache"].evaluated_get(bpy.context.evaluated_depsgraph_get()).data
    assert len(cloud.points) == len(read_ply(tmp_path / "frames" / "points" / "shot_003_v2.ply")) > 0


def test_add_to_scene_without_a_point_cache_says_to_bake_one(scene):
    add_effect(count=1000)
    with pytest.raises(RuntimeError, match="No point cache at .*: bake with Write Point Cache on first"):
        bpy.ops.gpu_particles.add_cached_geometry()


def ply_particles(path):
    from addon.output.point_cache import read_ply

    records = read_ply(path)
    return {"position": np.stack([records[axis] for axis in "xyz"], axis=1),
            "velocity": np.stack([records[axis] for axis in ("vx", "vy", "vz")], axis=1),
            "radius": records["radius"], "color": np.stack([records[f"color_{c}"] for c in "rgb"], axis=1),
            "id": records["id_high"].astype(np.int64) * 65536 + records["id_low"]}


@pytest.mark.usefixtures("pxr")
def test_usd_round_trip_through_pxr_and_blenders_usd_import_gives_the_point_caches_particles(scene, tmp_path):
    from addon.output.usd_points import pxr_modules

    add_effect(count=3000)
    scene.gpu_particles_output.write_points = scene.gpu_particles_output.write_usd = True
    bake()
    frames = tmp_path / "frames"
    _, Usd, UsdGeom, _ = pxr_modules()
    stage = Usd.Stage.Open(str(frames / "f.usda"))
    points = UsdGeom.Points(stage.GetDefaultPrim())
    assert (stage.GetStartTimeCode(), stage.GetEndTimeCode()) == (1, 4)
    for frame in range(1, 5):
        expected = ply_particles(frames / "points" / f"f_{frame:04d}.ply")
        assert 0 < len(expected["id"]) == len(points.GetPointsAttr().Get(frame))
        np.testing.assert_array_equal(np.array(points.GetPointsAttr().Get(frame)), expected["position"])
        np.testing.assert_array_equal(np.array(points.GetVelocitiesAttr().Get(frame)), expected["velocity"])
        np.testing.assert_array_equal(np.array(points.GetWidthsAttr().Get(frame)), 2 * expected["radius"])
        np.testing.assert_array_equal(np.array(points.GetIdsAttr().Get(frame)), expected["id"])
        color = points.GetDisplayColorPrimvar()
        assert color.GetInterpolation() == "vertex"
        np.testing.assert_array_equal(np.array(color.Get(frame)), expected["color"])
    assert bpy.ops.wm.usd_import(filepath=str(frames / "f.usda")) == {"FINISHED"}
    imported = bpy.data.objects["Particles"]
    for frame in (2, 4):
        scene.frame_set(frame)
        cloud = imported.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
        expected = ply_particles(frames / "points" / f"f_{frame:04d}.ply")
        positions = np.empty(len(cloud.points) * 3, np.float32)
        cloud.attributes["position"].data.foreach_get("vector", positions)
        ids = np.empty(len(cloud.points), np.int32)
        cloud.attributes["id"].data.foreach_get("value", ids)
        np.testing.assert_allclose(positions.reshape(-1, 3), expected["position"], atol=1e-5)
        np.testing.assert_array_equal(ids, expected["id"])


@pytest.mark.usefixtures("pxr")
def test_a_bake_in_chunks_writes_the_point_cache_and_usd_files_a_whole_bake_does(scene, tmp_path):
    add_effect(count=2000)
    output = scene.gpu_particles_output
    output.write_points = output.write_usd = True
    output.bake_path = str(tmp_path / "whole" / "f_####")
    bake()
    output.bake_path = str(tmp_path / "chunks" / "f_####")
    for first, last in ((3, 4), (1, 2)):  # any order: each file depends on its frame alone
        assert bpy.ops.gpu_particles.bake(frame_start=first, frame_end=last) == {"FINISHED"}
    whole = sorted(p.relative_to(tmp_path / "whole") for p in (tmp_path / "whole").rglob("*") if p.is_file())
    chunks = sorted(p.relative_to(tmp_path / "chunks") for p in (tmp_path / "chunks").rglob("*") if p.is_file())
    assert whole == chunks and len([p for p in whole if p.suffix in (".ply", ".usdc")]) == 8
    for path in whole:
        if path.name != "gpu_particles_bake.json":  # the sidecar names the frames it baked
            assert (tmp_path / "whole" / path).read_bytes() == (tmp_path / "chunks" / path).read_bytes(), path


@pytest.mark.usefixtures("pxr")
def test_a_usd_frame_without_live_particles_is_an_empty_valid_points_prim(tmp_path):
    from addon.output.usd_points import pxr_modules, write_frame

    _, Usd, UsdGeom, _ = pxr_modules()
    write_frame(tmp_path / "empty.usdc", None, 7, 24.0, 1.0)
    stage = Usd.Stage.Open(str(tmp_path / "empty.usdc"))
    points = UsdGeom.Points(stage.GetPrimAtPath("/Particles"))
    assert len(points.GetPointsAttr().Get(7)) == 0 and len(points.GetIdsAttr().Get(7)) == 0


def test_the_debris_presets_rocks_go_on_its_particles_one_picked_at_random_for_each(scene, tmp_path):
    from addon.output.point_cache import read_ply

    assert bpy.ops.gpu_particles.add(preset="debris") == {"FINISHED"}
    bpy.context.active_object.gpu_particles.active_effect.count = 400
    rocks = bpy.data.collections["Debris Rocks"]
    assert len(rocks.objects) == 4 and rocks.hide_render
    scene.gpu_particles_output.write_points = True
    bake()
    assert bpy.ops.gpu_particles.add_cached_geometry() == {"FINISHED"}
    scene.frame_set(4)
    geometry = bpy.data.objects["GPU Particles Cache"].evaluated_get(
        bpy.context.evaluated_depsgraph_get()).evaluated_geometry()
    instances = geometry.instances_pointcloud()
    picked = np.empty(len(instances.points), np.int32)
    instances.attributes[".reference_index"].data.foreach_get("value", picked)
    assert len(picked) == len(read_ply(tmp_path / "frames" / "points" / "f_0004.ply")) > 100
    assert sorted({geometry.instance_references()[i].name for i in picked}) == [f"Rock {n}" for n in range(1, 5)]


def test_cycles_renders_the_cache_as_spheres_blurred_along_their_velocity(scene, tmp_path):
    """The cache object in a small Cycles render: particles show (emissive spheres), and Blender's motion blur
    smears them along the ``velocity`` the node group stores (the picture changes with the shutter)."""
    add_effect(count=2000)
    scene.gpu_particles_output.write_points = True
    bake()
    assert bpy.ops.gpu_particles.add_cached_geometry() == {"FINISHED"}
    scene.gpu_particles_output.use_render = False  # Blender's own render alone
    scene.render.engine = "CYCLES"
    scene.cycles.device, scene.cycles.samples, scene.cycles.use_denoising = "CPU", 4, False
    scene.render.resolution_x, scene.render.resolution_y = 96, 54
    scene.frame_set(4)
    pictures = []
    for blur in (False, True):
        scene.render.use_motion_blur = blur
        scene.render.filepath = str(tmp_path / f"blur_{blur}.png")
        bpy.ops.render.render(write_still=True)
        image = bpy.data.images.load(scene.render.filepath)
        pictures.append(np.array(image.pixels[:], np.float32).reshape(54, 96, 4)[..., :3])
    still, blurred = pictures
    assert still.max() > 0.2, "the particles render"
    assert np.abs(still - blurred).mean() > 1e-3, "motion blur moves them"
