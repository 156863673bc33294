"""The VDB grids (engine/light/volume_grids.py): the bounds and placement, each grid's splat and resolve on the GPU
against the numpy reference of the same algorithm, and the edge cases (particles on the grid's edge, none live,
the voxel limit, determinism)."""

import numpy as np
import pytest

from addon.engine.light import volume_grids
from addon.engine.light.volume_grids import LEAF_VOXELS
from addon.engine.look.look import LOOK_SIZE, look_table
from addon.engine.reference.light import volume_grids as ref
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import SettingsError, effect_settings
from addon.engine.simulate import simulation
from addon.output import vdb_file


def over_grid(host, image, placement):
    """An image of the grid read back over the placement's voxels, (z, y, x[, lanes]) (the images may be larger:
    VolumeGrids reuses them while a grid fits)."""
    x, y, z = placement.shape
    return host.read(image)[:z, :y, :x]


def dense_leaves(leaves, lanes: int) -> np.ndarray:
    """A grid's leaves read back as dense halves (n, 8, 8, 8[, 3]) float32, [leaf, x, y, z], from their buffers
    (inactive voxels 0); each buffer's mask and metadata byte checked on the way."""
    dense = np.zeros((len(leaves.origins), LEAF_VOXELS, lanes), np.float32)
    at = 0
    for leaf, (mask, count) in enumerate(zip(leaves.masks, leaves.counts)):
        assert leaves.buffers[at:at + 64].tobytes() == mask.tobytes() and leaves.buffers[at + 64] == 0
        active = np.unpackbits(mask, bitorder="little").astype(bool)
        assert active.sum() == count
        values = np.frombuffer(leaves.buffers[at + 65:at + 65 + 2 * lanes * int(count)].tobytes(), "<f2")
        dense[leaf, active] = values.reshape(-1, lanes)
        at += 65 + 2 * lanes * int(count)
    assert at == len(leaves.buffers)
    return dense.reshape(-1, 8, 8, 8, *((lanes,) if lanes > 1 else ()))


def dense_grids(leaves, placement) -> dict:
    """Every grid read back as dense (x, y, z[, 3]) float32 over the placement (inactive voxels 0)."""
    grids = {}
    for grid, lanes in volume_grids.GRIDS.items():
        lanes = min(lanes, 3)
        dense = np.zeros((*placement.shape, *((lanes,) if lanes > 1 else ())), np.float32)
        for origin, leaf in zip(leaves.grids[grid].origins - np.asarray(placement.index),
                                dense_leaves(leaves.grids[grid], lanes)):
            x, y, z = origin
            dense[x:x + 8, y:y + 8, z:z + 8] = leaf
        grids[grid] = dense
    return grids


def same_leaves(first, second) -> bool:
    """Two reads of grids hold the same leaves, records and buffers."""
    return all(np.array_equal(getattr(first.grids[grid], part), getattr(second.grids[grid], part))
               for grid in volume_grids.GRIDS for part in ("origins", "masks", "counts", "buffers"))


def effect(host, rng, n=3000, lighting="EMISSION", **values):
    """An effect of ``n`` live particles in a cloud, moving, of random ages and sizes, and its look table."""
    settings = effect_settings({"count": n, "size": 0.05, "size_end": 0.4, "size_random": 0.5, "lifetime": 4.0,
                                "lighting": lighting, "density": 0.6, "shadow_density": 0.5,
                                "emission_strength": 3.0, "color_random": 0.3, "color_start": (1.0, 0.5, 0.2),
                                "color_end": (0.1, 0.2, 0.9), **values})
    system = simulation.ParticleSystem(host, settings)
    pos_age = np.concatenate([rng.normal(0.0, 0.3, (n, 3)) + (1.0, -2.0, 0.5), rng.uniform(0, 4, (n, 1))], axis=1)
    vel_life = np.concatenate([rng.normal(0.0, 2.0, (n, 3)), np.full((n, 1), 4.0)], axis=1)
    PARTICLE.read_image("vel_life", vel_life)["life"][:20] = 0.5  # dead: age past life
    system.write_state(pos_age.astype(np.float32), vel_life.astype(np.float32))
    look = host.texture("look", LOOK_SIZE, 1, "RGBA32F", look_table(settings))
    return system, look


@pytest.mark.parametrize("lighting", ["EMISSION", "LIT"])
def test_the_gpu_grids_match_the_reference(host, rng, lighting):
    """Density (a lit effect's extinction, an emissive one's discs), emission and velocity: the fixed-point sums
    equal, the floats within float32 rounding, and the bounds are the live particles' (center +- radius)."""
    system, look = effect(host, rng, lighting=lighting)
    grids = volume_grids.VolumeGrids(host)
    placement = grids.placement(system, look, 0.04)
    pos_age, vel_life = system.read_state()
    table = look_table(system.settings)
    centers, radii, _ = ref.particles(pos_age, vel_life, system.settings, table)
    lower, upper = grids.bounds(system, look)
    np.testing.assert_array_equal(lower, (centers - radii[:, None]).min(axis=0))
    np.testing.assert_array_equal(upper, (centers + radii[:, None]).max(axis=0))
    assert placement == volume_grids.place(lower, upper, 0.04, host.max_texture_3d_size)
    assert all(i % 8 == 0 for i in (*placement.index, *placement.shape))

    grids.allocate(placement.shape)
    expected = ref.grids(pos_age, vel_life, system.settings, table, placement.corner.astype(np.float32),
                         placement.voxel, placement.shape)
    for grid in volume_grids.GRIDS:
        grids.splat(system, look, placement, grid)
        sums = ref.splat(*ref.lanes(grid, pos_age, vel_life, system.settings, table, placement.voxel),
                         placement.corner.astype(np.float32), placement.voxel, placement.shape)
        for lane, image in enumerate(grids.sums[grid]):
            np.testing.assert_array_equal(over_grid(host, image, placement), sums[lane], err_msg=f"{grid} lane {lane}")
        grids.resolve(placement, grid)
        for lane, image in enumerate(grids.sums[grid]):
            assert not host.read(image).any(), f"{grid} lane {lane}: the resolve leaves the sums empty"
        gpu = over_grid(host, grids.values[grid], placement)
        np.testing.assert_allclose(gpu if gpu.ndim == 3 else gpu[..., :3], expected[grid], rtol=1e-6, atol=1e-6)
    grids.build(system, look, placement)  # the frame as a bake makes it: the emptied sums splatted again
    leaves = grids.read()
    dense = {grid: np.moveaxis(expected[grid], (0, 1, 2), (2, 1, 0)) for grid in volume_grids.GRIDS}  # x, y, z
    x, y, z = (n // 8 for n in placement.shape)
    for grid, got in dense_grids(leaves, placement).items():
        # the GPU's halves against numpy's rounding of the floats: within a half's ulp (on NVIDIA, whose compiler
        # fuses the multiply-add, a float may differ from volume_resolve's by an ulp, seen on the H200 2026-12-02,
        # and round to the other half)
        half = dense[grid].astype(np.float16).astype(np.float32)
        np.testing.assert_allclose(got, half, rtol=2**-10, atol=2**-24, err_msg=grid)
        held = (got != 0).reshape(x, 8, y, 8, z, 8, -1).any(axis=(1, 3, 5, 6))
        origins = np.asarray(leaves.grids[grid].origins, np.int64)
        np.testing.assert_array_equal(origins[np.lexsort(origins.T[::-1])],  # every leaf holding an active voxel
                                      np.argwhere(held) * 8 + placement.index)
        np.testing.assert_array_equal(vdb_file._sort_by_tree(origins), np.arange(len(origins)))  # in the tree's order
    assert (len(leaves.grids["emission"].origins) == 0) == (lighting == "LIT")  # a lit effect emits nothing
    assert leaves.grids["density"].counts.sum() > 0 and leaves.grids["velocity"].counts.sum() > 0


def test_the_grids_hold_what_the_particles_carry(host):
    """One particle: its whole cross-section lands over the voxels of its support (a ball of its radius), the
    emission its disc times its color, every voxel it reaches its velocity."""
    settings = effect_settings({"count": 1, "size": 0.1, "lifetime": 10.0, "emission_strength": 2.0,
                                "color_start": (1.0, 0.5, 0.25), "color_end": (1.0, 0.5, 0.25)})
    system = simulation.ParticleSystem(host, settings)
    system.write_state(np.array([[0.25, 0.25, 0.25, 1.0]], np.float32), np.array([[1.5, -2.0, 0.5, 10.0]], np.float32))
    look = host.texture("look", LOOK_SIZE, 1, "RGBA32F", look_table(settings))
    grids = volume_grids.VolumeGrids(host)
    voxel = 0.025  # the particle 4 voxels wide: its support
    placement = grids.placement(system, look, voxel)
    grids.build(system, look, placement)
    dense = dense_grids(grids.read(), placement)  # halves: within 2^-11 of each voxel's float
    held = np.argwhere(dense["density"] > 0)
    centers = (held + placement.index + 0.5) * voxel
    assert np.linalg.norm(centers - 0.25, axis=1).max() < 0.1  # within the particle's radius
    assert len(held) > 100  # a ball of radius 4 voxels: about 268 voxel centers
    cross_section = np.pi * 0.1**2  # what the particle stops, over the grid: density x voxel volume summed
    unit = len(held) / (256 * voxel) * voxel**3  # the dithered rounding: under a unit a voxel
    assert dense["density"].sum() * voxel**3 == pytest.approx(cross_section, abs=unit)
    np.testing.assert_allclose(dense["emission"].sum(axis=(0, 1, 2)) * voxel**3,
                               np.array([2.0, 1.0, 0.5]) * cross_section, atol=unit * 2)
    # within the fixed point's step over the weight (the support's rim has weights near 1/1000: left out)
    inner = held[np.linalg.norm(centers - 0.25, axis=1) < 0.07]
    np.testing.assert_allclose(dense["velocity"][tuple(inner.T)], np.tile((1.5, -2.0, 0.5), (len(inner), 1)),
                               atol=0.02)


def test_no_live_particle_places_no_grid(host, rng):
    system, look = effect(host, rng, n=100)
    pos_age, vel_life = system.read_state()
    PARTICLE.read_image("vel_life", vel_life)["life"][:] = -1.0  # never lived
    system.write_state(pos_age, vel_life)
    assert volume_grids.VolumeGrids(host).placement(system, look, 0.0) is None


def test_a_voxel_size_past_the_limit_is_refused_naming_it(host, rng):
    system, look = effect(host, rng, n=100)
    with pytest.raises(SettingsError, match="1,000,000,000 voxels"):
        volume_grids.VolumeGrids(host).placement(system, look, 1e-4)
    with pytest.raises(SettingsError, match="positive"):
        volume_grids.place((0, 0, 0), (1, 1, 1), float("nan"), 2048)


def test_auto_voxel_is_half_the_particle_size_within_the_longest_side(host, rng):
    settings = effect_settings({"size": 0.05})
    assert volume_grids.auto_voxel(settings, (0, 0, 0), (1, 1, 1)) == 0.025
    coarse = volume_grids.auto_voxel(settings, (0, 0, 0), (100, 1, 1))
    assert coarse == 0.025 * 2**4  # the first octave whose grid (leaves and margin included) fits
    assert 100 / coarse + 16 <= volume_grids.AUTO_LONGEST_SIDE < 100 / (coarse / 2) + 16


def test_grids_are_the_same_every_run(host, rng):
    system, look = effect(host, rng, n=20000)
    grids = volume_grids.VolumeGrids(host)
    placement = grids.placement(system, look, 0.02)
    runs = []
    for _ in range(2):
        grids.build(system, look, placement)
        runs.append(grids.read())
    assert same_leaves(*runs) and len(runs[0].grids["density"].buffers) > 0


def test_a_smaller_grid_in_the_images_of_a_larger_one_reads_back_the_same_leaves(host, rng):
    """VolumeGrids keeps its images while a frame's grid fits them: what the last frame left there stays out."""
    system, look = effect(host, rng, n=3000)
    reused = volume_grids.VolumeGrids(host)
    reused.build(system, look, reused.placement(system, look, 0.03))  # a larger grid first
    placement = reused.placement(system, look, 0.05)
    reused.build(system, look, placement)
    fresh = volume_grids.VolumeGrids(host)
    fresh.build(system, look, placement)
    first, second = reused.read(), fresh.read()
    assert same_leaves(first, second) and len(first.grids["density"].origins) > 0


def test_particles_past_a_grid_add_nothing_a_later_larger_grid_would_see(host, rng):
    """The sums are never cleared a frame (the resolve empties them): a grid cut short of the particles (its
    images larger than it) leaves nothing behind for the next frame's grid over all of them."""
    system, look = effect(host, rng, n=3000)
    whole = volume_grids.VolumeGrids(host).placement(system, look, 0.05)
    reused = volume_grids.VolumeGrids(host)
    reused.allocate(whole.shape)  # images that hold the whole cloud
    cut = volume_grids.Placement(whole.voxel, whole.index, (whole.shape[0] // 2 // 8 * 8, *whole.shape[1:]))
    reused.build(system, look, cut)  # half the cloud's x: the rest of its supports fall past the grid
    assert len(reused.read().grids["density"].origins) > 0
    reused.build(system, look, whole)
    fresh = volume_grids.VolumeGrids(host)
    fresh.build(system, look, whole)
    assert same_leaves(reused.read(), fresh.read())


def packed(host, values: dict, placement, grids=None, packing=tuple(volume_grids.GRIDS)):
    """The leaf passes of ``packing`` over grids holding ``values`` (by grid: (z, y, x) or (z, y, x, 4) float32) at
    ``placement``, in ``grids`` (a VolumeGrids, else new)."""
    grids = grids or volume_grids.VolumeGrids(host)
    grids.allocate(placement.shape)
    grids.values = {grid: host.volume(f"{grid}_grid", np.ascontiguousarray(values[grid], np.float32))
                    for grid in volume_grids.GRIDS}
    grids.pack(placement, packing)
    return grids


def records_and_stream(leaves, packing=tuple(volume_grids.GRIDS)):
    """The leaves read back as volume_leaf_bytes wrote them: (records of the grids packed, their buffers one after
    the other)."""
    packed_leaves = [leaves.grids[grid] for grid in packing]
    records = np.concatenate([np.concatenate([got.masks.view("<u4"), got.origins.view("<u4"), got.counts[:, None]],
                                             axis=1) for got in packed_leaves])
    return records, b"".join(got.buffers.tobytes() for got in packed_leaves)


def test_the_packed_halves_are_numpys_rounding_of_the_floats(host, rng):
    """volume_leaf.glsl's half_bits against numpy's float16 (OpenVDB's rounding too): ties to even, half subnormals,
    the largest half and past it, signed zeros (inactive), floats that round to a zero half (inactive), NaN; any
    GPU, whatever its packHalf2x16 does."""
    special = np.array([0.0, -0.0, 2.0**-26, 2.0**-25, 2.0**-25 * 1.0001, 2.0**-24, 3 * 2.0**-25, 5 * 2.0**-25,
                        6.0e-5, 2.0**-14, 2.0**-14 * (1 - 2.0**-11), 1 + 2.0**-11, 1 + 3 * 2.0**-11, 65504.0, 65519.0,
                        65520.0, 1e6, np.inf, 1 / 3, 0.1], np.float32)
    placement = volume_grids.Placement(0.1, (0, 0, 0), (16, 8, 8))  # x, y, z: two leaves along x
    lanes = rng.choice(np.concatenate([special, -special]), size=(8, 8, 16, 7)).astype(np.float32)  # z, y, x, lane
    lanes[..., :8, :] *= rng.choice([1.0, 2.0**-10, 2.0**-20], size=(8, 8, 8, 7)).astype(np.float32)
    lanes[0, 0, 0, 0] = np.nan
    values = {"density": lanes[..., 0], "emission": np.concatenate([lanes[..., 1:4], lanes[..., :1]], -1),
              "velocity": np.concatenate([lanes[..., 4:7], lanes[..., :1]], -1)}
    records, stream = records_and_stream(packed(host, values, placement).read())
    expected_records, expected_stream = ref.leaf_bytes(values, placement.index, placement.shape)
    np.testing.assert_array_equal(records, expected_records)
    assert stream == expected_stream


def scattered_values(rng, placement, held: float = 0.3) -> dict:
    """Values of every grid over the placement, (z, y, x[, 4]): ``held`` of the voxels not 0 (below 1: some of them
    so small their halves are 0, inactive, and the box's first leaves empty), a vec3 voxel sometimes 0 in one lane
    only."""
    x, y, z = placement.shape
    values = {}
    for grid, lanes in volume_grids.GRIDS.items():
        grid_values = rng.normal(0.0, 2.0, (z, y, x, 4)).astype(np.float32)
        grid_values[rng.random((z, y, x)) < 0.1, 1] = 0.0
        if held < 1.0:
            grid_values[rng.random((z, y, x)) > held] = 0.0
            grid_values[rng.random((z, y, x)) < 0.05] = 1e-9
            grid_values[:, :, :16] = 0.0
        values[grid] = grid_values[..., 0] if lanes == 1 else grid_values
    return values


FRAMES = {  # placement (index, shape), how many voxels hold something, the grids packed
    "several upper and lower nodes": ((-4096 - 32, 4096 - 64, -8), (64, 96, 16), 0.3, tuple(volume_grids.GRIDS)),
    "an empty frame": ((0, 0, 0), (16, 16, 8), 0.0, tuple(volume_grids.GRIDS)),
    "leaves fully active": ((-16, 8, 120), (24, 16, 16), 1.0, tuple(volume_grids.GRIDS)),
    "an effect emitting nothing": ((-512, 0, -64), (40, 24, 32), 0.2, ("density", "velocity")),
}


@pytest.mark.parametrize("frame", FRAMES)
def test_the_leaf_passes_match_the_reference(host, rng, frame):
    """volume_leaf_masks (masks, sizes and flags at each leaf's tree rank, the tallies) and volume_leaf_bytes (records
    and buffers) against numpy, over boxes across upper (4096 voxels) and lower (128) nodes with negative indices,
    an empty frame, leaves whose every voxel is active, and the grids of an effect emitting nothing after a frame of
    one emitting (the images reused: nothing of emission's left)."""
    index, shape, held, packing = FRAMES[frame]
    placement = volume_grids.Placement(0.1, index, shape)
    grids = packed(host, scattered_values(rng, placement), placement)  # a frame packing every grid before
    values = scattered_values(rng, placement, held)
    packed(host, values, placement, grids, packing)
    masks, sizes_and_flags, tally = ref.leaf_masks(values, index, shape, packing)
    file_leaves = grids.file_leaves
    np.testing.assert_array_equal(host.read(file_leaves.masks).ravel()[:masks.size].reshape(-1, 16), masks)
    np.testing.assert_array_equal(host.read(file_leaves.sizes).ravel()[:len(sizes_and_flags)], sizes_and_flags)
    np.testing.assert_array_equal(host.read(file_leaves.tally).ravel(), tally.ravel())
    leaves = grids.read()
    records, stream = records_and_stream(leaves, packing)
    expected_records, expected_stream = ref.leaf_bytes(values, index, shape, packing)
    np.testing.assert_array_equal(records, expected_records)
    assert stream == expected_stream
    assert (len(stream) == 0) == (held == 0.0)
    assert all(len(leaves.grids[grid].origins) == 0 for grid in volume_grids.GRIDS if grid not in packing)
    if held == 1.0:
        assert (records[:, 16 + 3] == 512).all()


def test_one_voxel_is_one_leaf_of_one_value(host, rng):
    placement = volume_grids.Placement(0.1, (-8, -8, -8), (16, 16, 16))
    values = {grid: np.zeros((16, 16, 16, *((4,) if lanes > 1 else ())), np.float32)
              for grid, lanes in volume_grids.GRIDS.items()}
    values["velocity"][3, 12, 9] = (0.5, 0.0, -2.0, 1.0)  # z, y, x: VDB voxel (1, 4, -5)
    leaves = packed(host, values, placement).read()
    velocity = leaves.grids["velocity"]
    assert all(len(leaves.grids[grid].origins) == 0 for grid in ("density", "emission"))
    np.testing.assert_array_equal(velocity.origins, [[0, 0, -8]])
    assert velocity.counts.tolist() == [1] and velocity.buffers[:64].tobytes() == np.packbits(
        np.arange(512) == 1 * 64 + 4 * 8 + 3, bitorder="little").tobytes()
    assert velocity.buffers[64:].tobytes() == b"\0" + np.array([0.5, 0.0, -2.0], "<f2").tobytes()


def test_the_tree_rank_is_the_files_leaf_order():
    """tree_rank (the kernels' and numpy's) ranks a box's leaves as vdb_file orders a tree's leaves, across upper
    and lower nodes and negative indices."""
    for first, span in (((-520, 500, -3), (24, 30, 20)), ((0, 0, 0), (3, 40, 1)), ((-17, -1, 15), (50, 2, 34))):
        leaves = np.indices(span).reshape(3, -1).T + first
        order = vdb_file._sort_by_tree(leaves * 8)
        ranks = ref.tree_rank(leaves, first, span)
        np.testing.assert_array_equal(ranks[order], np.arange(len(leaves)))


def test_leaves_not_given_back_stay_as_read_and_given_back_memory_is_read_into_again(host, rng):
    system, look = effect(host, rng, n=2000)
    grids = volume_grids.VolumeGrids(host)
    coarse, fine = (grids.placement(system, look, voxel) for voxel in (0.08, 0.06))
    grids.build(system, look, coarse)
    first = grids.read()
    held = first.grids["density"].buffers.copy()
    grids.build(system, look, fine)  # another frame's grid in the same images
    second = grids.read()
    np.testing.assert_array_equal(first.grids["density"].buffers, held)
    assert not np.shares_memory(second.grids["density"].buffers, first.grids["density"].buffers)
    first.give_back()
    first.give_back()  # once only: a second call gives nothing back twice
    grids.build(system, look, fine)
    third = grids.read()
    assert np.shares_memory(third.grids["density"].buffers, first.grids["density"].buffers)
    assert same_leaves(third, second)
    fourth = grids.read()  # nothing given back since: new memory
    assert not np.shares_memory(fourth.grids["density"].buffers, third.grids["density"].buffers)


def test_a_growing_plume_makes_its_images_a_few_times_not_every_allocation_step():
    """A grid growing a leaf a side a frame from 64 to 512 voxels: the images grow by GROWTH, about
    log(8) / log(1.25) times (the step alone: once a step, 14 times), and always hold the frame's grid."""
    held, made = None, 0
    for side in range(64, 513, volume_grids.LEAF):
        shape = (side, side * 5 // 8 // 8 * 8, side // 2)
        grown = volume_grids.held_shape(shape, held, 2048, budget=float("inf"))
        made += grown != held
        assert all(n <= g <= 2048 and g % volume_grids.ALLOCATION_STEP == 0 for n, g in zip(shape, grown))
        held = grown
    assert made <= 1 + np.ceil(np.log(8) / np.log(volume_grids.GROWTH))


def test_the_images_keep_their_size_while_the_grid_fits_and_grow_every_side_with_headroom():
    held = volume_grids.held_shape((100, 60, 40), None, 2048)
    assert held == (128, 96, 64)  # 1.25 x, in whole steps of 32
    assert volume_grids.held_shape((128, 8, 64), held, 2048) == held
    assert volume_grids.held_shape((200, 8, 64), held, 2048) == (256, 96, 96)  # every side 1.25 x, at least held
    assert volume_grids.held_shape((2000, 8, 8), held, 2048) == (2048, 96, 64)  # at most the GPU's 3D size


def test_no_headroom_past_the_budget_only_the_grids_own_sides():
    """Headroom that would take the images past the budget (an artist's card) is left out."""
    shape = (512, 480, 480)
    budget = np.prod(shape) * volume_grids.VOXEL_BYTES * 1.5  # the grid fits, its 1.25^3 headroom does not
    assert volume_grids.held_shape(shape, None, 2048, budget) == (512, 480, 480)
    assert volume_grids.held_shape((100, 100, 100), None, 2048, budget) == (128, 128, 128)
    assert volume_grids.VOXEL_BYTES * 512**3 > volume_grids.HEADROOM_BYTES  # Auto's largest grid: none


def test_larger_images_read_into_the_host_memory_given_back_and_the_leaves_are_unchanged(host, rng):
    """A grid that outgrows the images makes new ones (and new leaf images) but reads into the buffers the frames
    before gave back, where they hold the read; its leaves are those fresh images give."""
    system, look = effect(host, rng, n=2000)
    grids = volume_grids.VolumeGrids(host)
    coarse, fine = (grids.placement(system, look, voxel) for voxel in (0.08, 0.02))
    grids.build(system, look, coarse)
    first = grids.read()
    first.give_back()
    grids.build(system, look, fine)  # outgrows the coarse grid's images
    assert grids.allocations == 2
    second = grids.read()
    assert np.shares_memory(second.grids["density"].buffers, first.grids["density"].buffers)
    fresh = volume_grids.VolumeGrids(host)
    fresh.build(system, look, fine)
    assert same_leaves(second, fresh.read())

