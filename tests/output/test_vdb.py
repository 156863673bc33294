"""VDB files (output/volumes.py): what openvdb reads back equals the GPU's grids within half floats, an effect with
no live particle writes empty but valid grids, the same frame writes the same bytes, and a write that fails
midway (the file size limit reached) raises."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from addon.engine.light import volume_grids
from addon.engine.seam.records import PARTICLE
from addon.output import vdb_file, volumes
from tests.engine.light.test_volume_grids import effect, over_grid, packed, scattered_values


def read_array(grid, placement, lanes):
    """A grid's values over the placement's voxels, (x, y, z[, 3]) (inactive voxels: the background, 0)."""
    array = np.zeros((*placement.shape, 3) if lanes == 3 else placement.shape, np.float32)
    grid.copyToArray(array, ijk=placement.index)
    return array


def test_the_vdb_read_back_equals_the_gpu_grids_within_half_floats(host, rng, tmp_path):
    """Every voxel of each grid as openvdb reads it against the GPU's whole grid (not only the leaves read back)."""
    system, look = effect(host, rng, n=5000)
    volume = volume_grids.VolumeGrids(host)
    captured = volumes.effect_volume(volume, system, look, "Fire", 0.03)
    volumes.write(tmp_path / "frame.vdb", [captured])
    grids = volumes.read(tmp_path / "frame.vdb")
    assert set(grids) == {"density", "emission", "velocity"}
    for name, lanes in volume_grids.GRIDS.items():
        lanes = min(lanes, 3)
        gpu = np.moveaxis(over_grid(host, volume.values[name], captured.placement), (0, 1, 2), (2, 1, 0))
        gpu = gpu if gpu.ndim == 3 else gpu[..., :3]
        back = read_array(grids[name], captured.placement, lanes)
        np.testing.assert_allclose(back, gpu, rtol=2**-11, atol=6e-8, err_msg=name)  # half: 11 bits, subnormals
        assert grids[name].metadata["is_saved_as_half_float"]
        assert grids[name].activeVoxelCount() < gpu.size / lanes  # sparse: the empty voxels inactive
    density = grids["density"]
    assert density.activeVoxelCount() == np.count_nonzero(over_grid(host, volume.values["density"], captured.placement))
    # The transform: voxel (i, j, k) centered at (ijk + 0.5) x voxel, the GPU's lattice
    assert density.transform.indexToWorld((2, 0, -1)) == pytest.approx((2.5 * 0.03, 0.5 * 0.03, -0.5 * 0.03))


def dense_file_grids(values: dict, placement) -> list[vdb_file.FileGrid]:
    """Every grid's values (z, y, x[, 4]) over the placement as vdb_file's dense leaves, every leaf of the box, as
    halves (what the GPU read back before it made the buffers: a float whose half is 0 inactive)."""
    x, y, z = (n // 8 for n in placement.shape)
    origins = np.indices((x, y, z)).reshape(3, -1).T * 8 + placement.index
    grids = []
    for grid, lanes in volume_grids.GRIDS.items():
        lanes = min(lanes, 3)
        in_place = np.moveaxis(np.asarray(values[grid]).reshape(*placement.shape[::-1], -1), (0, 1, 2), (2, 1, 0))
        leaves = in_place[..., :lanes].reshape(x, 8, y, 8, z, 8, lanes).transpose(0, 2, 4, 1, 3, 5, 6)
        grids.append(vdb_file.FileGrid(grid, leaves.reshape(-1, 8, 8, 8, lanes).astype(np.float16), origins, placement.voxel, lanes,
                                       "fog volume" if grid == "density" else "unknown"))
    return grids


def test_the_gpus_leaves_make_the_bytes_numpy_makes_of_the_dense_grids(host, rng):
    """The file from the GPU's leaf buffers equals, byte for byte, vdb_file's encoding of the same grids as dense
    leaves (numpy's active voxels, tree order and buffers: what the files were before the GPU made them): an
    emissive and a lit effect's splatted grids (the lit one's emission empty), scattered values across upper and
    lower nodes with negative indices, and grids holding nothing."""
    cases = []
    for lighting in ("EMISSION", "LIT"):
        system, look = effect(host, rng, n=4000, lighting=lighting)
        volume = volume_grids.VolumeGrids(host)
        captured = volumes.effect_volume(volume, system, look, "Fire", 0.03)
        splatted = {grid: over_grid(host, volume.values[grid], captured.placement) for grid in volume_grids.GRIDS}
        if lighting == "LIT":
            splatted["emission"] = np.zeros_like(splatted["emission"])  # not splatted: its images hold no frame
        cases.append((captured, splatted))
    for index, shape, held in (((-4096 - 32, 4096 - 64, -8), (64, 96, 16), 0.3), ((8, -16, 0), (16, 16, 8), 0.0)):
        placement = volume_grids.Placement(0.05, index, shape)
        values = scattered_values(rng, placement, held)  # held 0: particles alive, every voxel 0 (empty grids)
        cases.append((volumes.EffectVolume("Fire", packed(host, values, placement).read(), placement,
                                           placement.voxel), values))
    lengths = []
    for effect_volume, grid_values in cases:
        ours = b"".join(bytes(part) for part in volumes.encode([effect_volume]))
        dense = b"".join(bytes(part) for part in vdb_file.encode(dense_file_grids(grid_values,
                                                                                  effect_volume.placement)))
        assert ours == dense
        lengths.append(len(ours))
    assert min(lengths[:-1]) > 100_000 and lengths[-1] < 2000  # the last: three empty grids


def test_effects_captured_together_write_what_each_captured_alone_writes(host, rng):
    """Every effect's bounds pass before one wait, then every grid before the reads: the same grids as one effect
    after another (an emissive and a lit effect, and one with no live particle)."""
    effects = [(name, *effect(host, rng, n=3000, lighting=lighting)) for name, lighting in
               (("Fire", "EMISSION"), ("Smoke", "LIT"), ("Ash", "LIT"))]
    (_, smoke, _), (_, ash, _) = effects[1:]
    pos_age, vel_life = smoke.read_state()
    PARTICLE.read_image("pos_age", pos_age)["position"][:] += (0.7, 0.0, 0.0)  # a grid of its own
    smoke.write_state(pos_age, vel_life)
    pos_age, vel_life = ash.read_state()
    PARTICLE.read_image("vel_life", vel_life)["life"][:] = -1.0
    ash.write_state(pos_age, vel_life)
    together = volumes.effect_volumes([(name, volume_grids.VolumeGrids(host), system, look)
                                       for name, system, look in effects], 0.04)
    alone = [volumes.effect_volume(volume_grids.VolumeGrids(host), system, look, name, 0.04)
             for name, system, look in effects]
    assert [captured.placement for captured in together] == [captured.placement for captured in alone]
    assert together[2].placement is None and together[0].placement != together[1].placement
    assert b"".join(map(bytes, volumes.encode(together))) == b"".join(map(bytes, volumes.encode(alone)))


def test_no_live_particle_writes_empty_valid_grids(host, rng, tmp_path):
    system, look = effect(host, rng, n=100)
    pos_age, vel_life = system.read_state()
    PARTICLE.read_image("vel_life", vel_life)["life"][:] = -1.0
    system.write_state(pos_age, vel_life)
    captured = volumes.effect_volume(volume_grids.VolumeGrids(host), system, look, "Fire", 0.0)
    assert captured.placement is None and captured.voxel == 0.025  # Auto: half the particle size
    volumes.write(tmp_path / "empty.vdb", [captured, captured])
    grids = volumes.read(tmp_path / "empty.vdb")
    assert set(grids) == {f"Fire.{grid}" for grid in volume_grids.GRIDS}  # two effects: named after each
    assert all(grid.activeVoxelCount() == 0 for grid in grids.values())


def test_the_same_frame_writes_the_same_bytes(host, rng, tmp_path):
    """OpenVDB's random header UUID replaced by one from the contents: identical files, different frames differ."""
    system, look = effect(host, rng, n=2000)
    captured = volumes.effect_volume(volume_grids.VolumeGrids(host), system, look, "Fire", 0.05)
    for name in ("a.vdb", "b.vdb"):
        volumes.write(tmp_path / name, [captured])
    first, second = (tmp_path / "a.vdb").read_bytes(), (tmp_path / "b.vdb").read_bytes()
    assert first == second
    captured.leaves.grids["density"].buffers[65] ^= 1  # the first voxel's value: its half's lowest bit
    volumes.write(tmp_path / "c.vdb", [captured])
    third = (tmp_path / "c.vdb").read_bytes()
    uuid = slice(vdb_file.UUID_OFFSET, vdb_file.UUID_OFFSET + vdb_file.UUID_LENGTH)
    assert third[uuid] != first[uuid] and len(third[uuid].decode().split("-")) == 5
    assert set(volumes.read(tmp_path / "c.vdb")) == {"density", "emission", "velocity"}


def test_a_frame_captured_while_the_one_before_is_written_leaves_that_file_as_captured(host, rng, tmp_path,
                                                                                     monkeypatch):
    """The file's parts hold the read-back buffers themselves: the next frame (captured as a writer writes this
    one) must read into other memory, so its memory goes back only once the file is on disk."""
    system, look = effect(host, rng, n=2000)
    volume = volume_grids.VolumeGrids(host)
    alone = volumes.effect_volume(volume_grids.VolumeGrids(host), system, look, "Fire", 0.05)
    volumes.write(tmp_path / "alone.vdb", [alone])
    disk_write = vdb_file.write

    def next_frame_captured_first(path, parts):
        volumes.effect_volume(volume, system, look, "Fire", 0.03)  # a finer grid: the same pool
        disk_write(path, parts)
    monkeypatch.setattr(vdb_file, "write", next_frame_captured_first)
    volumes.write(tmp_path / "frame.vdb", [volumes.effect_volume(volume, system, look, "Fire", 0.05)])
    assert (tmp_path / "frame.vdb").read_bytes() == (tmp_path / "alone.vdb").read_bytes()


def test_a_write_past_the_file_size_limit_raises(tmp_path):
    """The disk filling midway (here the process's file size limit, RLIMIT_FSIZE): openvdb's write fails and
    says so, rather than leaving a short file as if written (the frame writer then removes it)."""
    script = textwrap.dedent(f"""
        import resource, signal, sys
        import numpy as np
        sys.path.insert(0, {str(__import__('pathlib').Path(__file__).resolve().parents[2])!r})
        from addon.engine.light.volume_grids import GridLeaves, Leaves, Placement
        from addon.output import vdb_file, volumes
        rng = np.random.default_rng(3)
        n = 512  # leaves of 8^3 voxels, a 64^3 grid
        origins = np.argwhere(np.ones((8, 8, 8), bool)) * 8
        in_tree = {{grid: vdb_file.FileGrid(grid, rng.random((n, 8, 8, 8, lanes), np.float32), origins, 0.1,
                                            lanes).in_tree_order() for grid, lanes in (("density", 1), ("emission", 3),
                                                                                     ("velocity", 3))}}
        leaves = Leaves({{grid: GridLeaves(tree.origins, tree.masks, tree.counts, tree.buffers, tree.bounds)
                         for grid, tree in in_tree.items()}}, lambda: None)
        effect = volumes.EffectVolume("Fire", leaves, Placement(0.1, (0, 0, 0), (64, 64, 64)), 0.1)
        volumes.openvdb()
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))
        try:
            volumes.write({str(tmp_path / "full.vdb")!r}, [effect])
        except Exception as error:
            print("raised", type(error).__name__, error)
        else:
            print("written")
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert "raised" in result.stdout, result.stdout + result.stderr
