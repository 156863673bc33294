"""VDB volumes a bake writes beside its frames (output/volumes.py through output/extras.py): one file a frame,
a chunked bake's files byte-identical to a whole one's, a voxel size past the limit refused with nothing
written, and a disk filling midway leaving the files before whole and no partial file."""

import errno
import os

import bpy
import numpy as np
import pytest

from addon.engine.light import volume_grids
from addon.output import vdb_file, volumes
from tests.conftest import add_effect
from tests.engine.light.test_volume_grids import dense_leaves


def bake(expect_error=None, **frames):
    if expect_error is None:
        assert bpy.ops.gpu_particles.bake(**frames) == {"FINISHED"}
        return
    with pytest.raises(RuntimeError, match=expect_error):
        bpy.ops.gpu_particles.bake(**frames)


def test_a_bake_with_write_volumes_writes_one_vdb_a_frame_of_the_gpu_grids(scene, tmp_path):
    from addon.scene.renderer import SceneRenderer

    add_effect(count=3000)
    scene.gpu_particles_output.write_volumes = True
    scene.gpu_particles_output.volume_voxel_size = 0.05
    bake()
    folder = tmp_path / "frames" / "volumes"
    assert sorted(os.listdir(folder)) == [f"f_{frame:04d}.vdb" for frame in range(1, 5)]
    renderer = SceneRenderer(scene, 1, 1)
    renderer.advance_to(4)
    system = renderer.simulation.systems[0]
    expected = volumes.effect_volume(volume_grids.VolumeGrids(renderer.host), system,
                                     renderer.resources.look_texture(system), "Emitter", 0.05)
    grids = volumes.read(folder / "f_0004.vdb")
    assert set(grids) == {"density", "emission", "velocity"}
    density = grids["density"]
    assert density.activeVoxelCount() == expected.leaves.grids["density"].counts.sum() > 0
    assert density.transform.voxelSize()[0] == pytest.approx(0.05)
    leaf = np.zeros((8, 8, 8), np.float32)
    density.copyToArray(leaf, ijk=tuple(int(i) for i in expected.leaves.grids["density"].origins[0]))
    np.testing.assert_array_equal(leaf, dense_leaves(expected.leaves.grids["density"], 1)[0])


def test_a_chunked_bake_writes_the_same_vdb_bytes_as_a_whole_one(scene, tmp_path):
    add_effect(count=2000)
    scene.gpu_particles_output.write_volumes = True
    bake()
    scene.gpu_particles_output.bake_path = str(tmp_path / "chunks" / "f_####")
    bake(frame_start=1, frame_end=2)
    bake(frame_start=3, frame_end=4)
    whole, chunks = tmp_path / "frames" / "volumes", tmp_path / "chunks" / "volumes"
    assert sorted(os.listdir(chunks)) == sorted(os.listdir(whole)) == [f"f_{f:04d}.vdb" for f in range(1, 5)]
    for name in os.listdir(whole):
        assert (whole / name).read_bytes() == (chunks / name).read_bytes(), name


def test_a_voxel_size_past_the_voxel_limit_is_refused_naming_it_and_writes_nothing(scene, tmp_path):
    add_effect(count=1000)
    scene.gpu_particles_output.write_volumes = True
    scene.gpu_particles_output.volume_voxel_size = 1e-5
    bake(expect_error="Frame 1's volumes: VDB voxel size 1e-05 would make a grid of .* the limit of "
                      "1,000,000,000 voxels")
    assert not list((tmp_path / "frames").rglob("*.vdb"))


def test_a_disk_filling_mid_sequence_leaves_the_volumes_before_whole_and_no_partial_file(scene, tmp_path,
                                                                                        monkeypatch):
    """The disk fills while frame 3's file is written (half of it on disk, then ENOSPC): the bake stops naming it,
    the frames before stay whole, no partial file is left."""
    real = vdb_file.write

    def filling_disk(path, parts):
        if "f_0003" not in str(path):
            return real(path, parts)
        with open(path, "wb") as file:
            file.write(bytes(parts[0])[:len(parts[0]) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    add_effect(count=2000)
    scene.frame_end = 6
    scene.gpu_particles_output.write_volumes = True
    monkeypatch.setattr(vdb_file, "write", filling_disk)
    bake(expect_error="Could not write frame 3's volumes to .*f_0003.vdb'.*No space left on device")
    files = sorted(os.listdir(tmp_path / "frames" / "volumes"))
    assert {"f_0001.vdb", "f_0002.vdb"} <= set(files)
    assert "f_0003.vdb" not in files and not [name for name in files if name.startswith(".")]
    for name in files:
        assert set(volumes.read(tmp_path / "frames" / "volumes" / name)) == {"density", "emission", "velocity"}


def test_add_to_scene_adds_a_volume_playing_the_baked_volumes_and_names_a_moved_folder(scene, tmp_path):
    from addon.output.volume_object import missing_volumes

    add_effect(count=2000)
    scene.gpu_particles_output.write_volumes = True
    bake()
    assert bpy.ops.gpu_particles.add_cached_geometry() == {"FINISHED"}
    volume_objects = [obj for obj in scene.objects if obj.type == "VOLUME"]
    assert len(volume_objects) == 1 and not [obj for obj in scene.objects if obj.type == "POINTCLOUD"]
    volume = volume_objects[0].data
    assert volume.is_sequence and volume.frame_start == 1 and volume.frame_duration == 4
    scene.frame_set(3)
    evaluated = volume_objects[0].evaluated_get(bpy.context.evaluated_depsgraph_get()).data
    assert evaluated.grids.load() and evaluated.grids.frame_filepath.endswith("f_0003.vdb")
    assert missing_volumes(scene) == []
    os.rename(tmp_path / "frames" / "volumes", tmp_path / "frames" / "moved")
    assert missing_volumes(scene) == [f"{volume_objects[0].name}: volume folder "
                                      f"'{tmp_path / 'frames' / 'volumes'}' is missing (moved or deleted?)"]
    scene.frame_set(9)  # past the baked frames: no volume there, nothing missing
    assert missing_volumes(scene) == []
