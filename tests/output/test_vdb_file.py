"""VDB files written with numpy (output/vdb_file.py): openvdb reads back every leaf's voxels as halves, active where
a lane is not 0, the same voxels as openvdb's own writing of those leaves, across root nodes and negative indices;
an empty grid is valid; the same grids give the same bytes."""

import numpy as np
import pytest

from addon.output import vdb_file, volumes


def scattered_leaves(rng, lanes: int, count: int = 200, span: int = 5000):
    """``count`` leaves at random places over several root nodes (4096 voxels a side), negative indices too, 60%
    of their voxels 0, a vec3 grid's voxels sometimes 0 in one lane only, the first three leaves empty."""
    origins = np.unique(rng.choice(np.arange(-span // 8, span // 8) * 8, size=(count, 3)), axis=0)
    shape = (len(origins), 8, 8, 8, *((3,) if lanes == 3 else ()))
    leaves = (rng.random(shape, np.float32) - 0.25) * 4
    leaves[rng.random(shape[:4]) < 0.6] = 0
    if lanes == 3:
        leaves[rng.random(shape[:4]) < 0.2, 1] = 0
    leaves[:3] = 0
    return leaves, origins


def read_leaf(grid, origin, lanes):
    leaf = np.zeros((8, 8, 8, 3) if lanes == 3 else (8, 8, 8), np.float32)
    grid.copyToArray(leaf, ijk=tuple(int(i) for i in origin))
    return leaf


@pytest.mark.parametrize("lanes", [1, 3])
def test_openvdb_reads_back_every_leaf_as_halves(rng, tmp_path, lanes):
    leaves, origins = scattered_leaves(rng, lanes)
    order = rng.permutation(len(origins))  # any order in: the file's is the tree's
    grid = vdb_file.FileGrid("density", leaves[order], origins[order], 0.05, lanes, "fog volume")
    vdb_file.write(tmp_path / "ours.vdb", vdb_file.encode([grid]))
    back = volumes.read(tmp_path / "ours.vdb")["density"]
    active = (leaves != 0).reshape(len(origins), 512, -1).any(axis=2)
    assert back.activeVoxelCount() == active.sum()
    assert back.leafCount() == np.count_nonzero(active.any(axis=1))  # the empty leaves are not in the tree
    for origin, leaf in zip(origins, leaves):
        np.testing.assert_array_equal(read_leaf(back, origin, lanes), leaf.astype(np.float16).astype(np.float32))
    assert back.metadata["is_saved_as_half_float"] and back.metadata["class"] == "fog volume"
    bounds = np.argwhere(active.reshape(-1, 8, 8, 8))
    corners = bounds[:, 1:] + origins[bounds[:, 0]]
    assert back.metadata["file_bbox_min"] == tuple(corners.min(axis=0))
    assert back.metadata["file_bbox_max"] == tuple(corners.max(axis=0))
    assert back.transform.indexToWorld((2, 0, -1)) == pytest.approx((2.5 * 0.05, 0.5 * 0.05, -0.5 * 0.05))


def test_the_tree_is_the_one_openvdb_writes_for_the_same_leaves(rng, tmp_path):
    """The same voxels through openvdb's own copyFromArray and write: the same active voxels, bounds and values."""
    vdb = volumes.openvdb()
    leaves, origins = scattered_leaves(rng, 1, count=60, span=300)
    theirs = vdb.FloatGrid()
    for origin, leaf in zip(origins, leaves):
        theirs.copyFromArray(np.ascontiguousarray(leaf), ijk=tuple(int(i) for i in origin), tolerance=0.0)
    theirs.name, theirs.saveFloatAsHalf = "density", True
    vdb.write(str(tmp_path / "theirs.vdb"), [theirs])
    vdb_file.write(tmp_path / "ours.vdb", vdb_file.encode([vdb_file.FileGrid("density", leaves, origins, 0.1)]))
    ours, theirs = (volumes.read(tmp_path / name)["density"] for name in ("ours.vdb", "theirs.vdb"))
    assert ours.activeVoxelCount() == theirs.activeVoxelCount()
    assert ours.evalActiveVoxelBoundingBox() == theirs.evalActiveVoxelBoundingBox()
    for origin in origins:
        np.testing.assert_array_equal(read_leaf(ours, origin, 1), read_leaf(theirs, origin, 1))


def test_an_empty_grid_is_a_valid_file(tmp_path):
    empty = vdb_file.FileGrid("velocity", np.empty((0, 8, 8, 8, 3), np.float32), np.empty((0, 3), np.int64), 0.2, 3)
    vdb_file.write(tmp_path / "empty.vdb", vdb_file.encode([empty, empty]))
    grids = volumes.read(tmp_path / "empty.vdb")
    assert list(grids) == ["velocity"] and grids["velocity"].activeVoxelCount() == 0  # openvdb: one name, two grids


def test_the_same_grids_give_the_same_bytes_and_a_uuid_from_them(rng):
    leaves, origins = scattered_leaves(rng, 3, count=30)
    first, second = (b"".join(bytes(part) for part in vdb_file.encode([vdb_file.FileGrid("v", leaves, origins,
                                                                                          0.1, 3)]))
                     for _ in range(2))
    assert first == second
    leaves[5, 0, 0, 0] = (1.0, 2.0, 3.0)
    third = b"".join(bytes(part) for part in vdb_file.encode([vdb_file.FileGrid("v", leaves, origins, 0.1, 3)]))
    uuid = slice(vdb_file.UUID_OFFSET, vdb_file.UUID_OFFSET + vdb_file.UUID_LENGTH)
    assert third[uuid] != first[uuid] and [len(part) for part in third[uuid].decode().split("-")] == [8, 4, 4, 4, 12]
