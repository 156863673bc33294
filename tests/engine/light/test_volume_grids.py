"""The VDB grids (engine/light/volume_grids.py): the bounds and placement, each grid's splat and resolve on the GPU
against the numpy reference of the same algorithm, and the edge cases (particles on the grid's edge, none live,
the voxel limit, determinism)."""

import numpy as np
import pytest

from addon.engine.light import volume_grids
from addon.engine.look.look import LOOK_SIZE, look_table
from addon.engine.reference.light import volume_grids as ref
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import SettingsError, effect_settings
from addon.engine.simulate import simulation


def over_grid(host, image, placement):
    """An image of the grid read back over the placement's voxels, (z, y, x[, lanes]) (the images may be larger:
    VolumeGrids reuses them while a grid fits)."""
    x, y, z = placement.shape
    return host.read(image)[:z, :y, :x]


def by_place(leaves):
    """The leaves read back sorted by place (the GPU packs them in the order its workgroups finish)."""
    order = np.lexsort(leaves.origins.T[::-1])
    return volume_grids.Leaves(leaves.origins[order], {grid: None if values is None else values[order]
                                                       for grid, values in leaves.grids.items()})


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
    leaves = by_place(grids.read())
    dense = {grid: np.moveaxis(expected[grid], (0, 1, 2), (2, 1, 0)) for grid in volume_grids.GRIDS}  # x, y, z
    x, y, z = (n // 8 for n in placement.shape)
    active = np.any([(dense[grid] != 0).reshape(x, 8, y, 8, z, 8, -1).any(axis=(1, 3, 5, 6))
                     for grid in volume_grids.GRIDS], axis=0)
    np.testing.assert_array_equal(leaves.origins, np.argwhere(active) * 8)  # every active leaf, sorted by place
    assert (leaves.grids["emission"] is None) == (lighting == "LIT")  # read back only where the effect emits
    for grid in (grid for grid in volume_grids.GRIDS if leaves.grids[grid] is not None):
        for origin, leaf in zip(leaves.origins, leaves.grids[grid]):
            x, y, z = origin
            # the GPU's halves against numpy's rounding of the floats: within a half's ulp (on NVIDIA, whose compiler
            # fuses the multiply-add, a float may differ from volume_resolve's by an ulp, seen on the H200 2026-12-02,
            # and round to the other half)
            half = dense[grid][x:x + 8, y:y + 8, z:z + 8].astype(np.float16).astype(np.float32)
            assert leaf.dtype == np.float16
            np.testing.assert_allclose(leaf.astype(np.float32), half, rtol=2**-10, atol=2**-24)
    assert leaves.grids["density"].max() > 0 and np.abs(leaves.grids["velocity"]).max() > 0


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
    leaves = grids.read()
    dense = {grid: np.zeros((*placement.shape, *values.shape[4:]), np.float32) for grid, values in leaves.grids.items()}
    # halves: within 2^-11 of each voxel's float
    for grid, values in leaves.grids.items():
        for (x, y, z), leaf in zip(leaves.origins, values):
            dense[grid][x:x + 8, y:y + 8, z:z + 8] = leaf
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
        runs.append(by_place(grids.read()))
    assert runs[0].origins.tobytes() == runs[1].origins.tobytes()
    for grid in volume_grids.GRIDS:
        assert runs[0].grids[grid].tobytes() == runs[1].grids[grid].tobytes()


def test_a_smaller_grid_in_the_images_of_a_larger_one_reads_back_the_same_leaves(host, rng):
    """VolumeGrids keeps its images while a frame's grid fits them: what the last frame left there stays out."""
    system, look = effect(host, rng, n=3000)
    reused = volume_grids.VolumeGrids(host)
    reused.build(system, look, reused.placement(system, look, 0.03))  # a larger grid first
    placement = reused.placement(system, look, 0.05)
    reused.build(system, look, placement)
    fresh = volume_grids.VolumeGrids(host)
    fresh.build(system, look, placement)
    first, second = by_place(reused.read()), by_place(fresh.read())
    assert first.origins.tobytes() == second.origins.tobytes() and len(first.origins) > 0
    for grid in volume_grids.GRIDS:
        assert first.grids[grid].tobytes() == second.grids[grid].tobytes()


def test_particles_past_a_grid_add_nothing_a_later_larger_grid_would_see(host, rng):
    """The sums are never cleared a frame (the resolve empties them): a grid cut short of the particles (its
    images larger than it) leaves nothing behind for the next frame's grid over all of them."""
    system, look = effect(host, rng, n=3000)
    whole = volume_grids.VolumeGrids(host).placement(system, look, 0.05)
    reused = volume_grids.VolumeGrids(host)
    reused.allocate(whole.shape)  # images that hold the whole cloud
    cut = volume_grids.Placement(whole.voxel, whole.index, (whole.shape[0] // 2 // 8 * 8, *whole.shape[1:]))
    reused.build(system, look, cut)  # half the cloud's x: the rest of its supports fall past the grid
    assert len(reused.read().origins) > 0
    reused.build(system, look, whole)
    fresh = volume_grids.VolumeGrids(host)
    fresh.build(system, look, whole)
    first, second = by_place(reused.read()), by_place(fresh.read())
    assert first.origins.tobytes() == second.origins.tobytes()
    for grid in volume_grids.GRIDS:
        assert first.grids[grid].tobytes() == second.grids[grid].tobytes()


def test_the_packed_halves_are_numpys_rounding_of_the_floats(host, rng):
    """volume_pack's half_bits against numpy's float16 (OpenVDB's rounding too): ties to even, half subnormals,
    the largest half and past it, signed zeros, NaN; any GPU, whatever its packHalf2x16 does."""
    special = np.array([0.0, -0.0, 2.0**-26, 2.0**-25, 2.0**-25 * 1.0001, 2.0**-24, 3 * 2.0**-25, 5 * 2.0**-25,
                        6.0e-5, 2.0**-14, 2.0**-14 * (1 - 2.0**-11), 1 + 2.0**-11, 1 + 3 * 2.0**-11, 65504.0, 65519.0,
                        65520.0, 1e6, np.inf, 1 / 3, 0.1], np.float32)
    shape = (16, 8, 8)  # x, y, z: two leaves along x
    lanes = rng.choice(np.concatenate([special, -special]), size=(8, 8, 16, 7)).astype(np.float32)  # z, y, x, lane
    lanes[..., :8, :] *= rng.choice([1.0, 2.0**-10, 2.0**-20], size=(8, 8, 8, 7)).astype(np.float32)
    lanes[0, 0, 0, 0] = np.nan
    grids = volume_grids.VolumeGrids(host)
    grids.allocate(shape)
    grids.values = {"density": host.volume("density_grid", lanes[..., 0]),
                    "emission": host.volume("emission_grid", np.concatenate([lanes[..., 1:4], lanes[..., :1]], -1)),
                    "velocity": host.volume("velocity_grid", np.concatenate([lanes[..., 4:7], lanes[..., :1]], -1))}
    grids.emits = True
    grids.pack(shape)
    leaves = by_place(grids.read())
    np.testing.assert_array_equal(leaves.origins, [[0, 0, 0], [8, 0, 0]])
    in_place = np.moveaxis(lanes, (0, 1, 2), (2, 1, 0))  # x, y, z, lane
    with np.errstate(over="ignore"):  # past the largest half: infinity, as the GPU's
        expected = np.stack([in_place[:8], in_place[8:]]).astype(np.float16)  # leaf, x, y, z, lane
    for grid, got, want in (("density", leaves.grids["density"], expected[..., 0]),
                            ("emission", leaves.grids["emission"], expected[..., 1:4]),
                            ("velocity", leaves.grids["velocity"], expected[..., 4:7])):
        np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16), err_msg=grid)


def test_leaves_not_given_back_stay_as_read_and_given_back_memory_is_read_into_again(host, rng):
    system, look = effect(host, rng, n=2000)
    grids = volume_grids.VolumeGrids(host)
    coarse, fine = (grids.placement(system, look, voxel) for voxel in (0.08, 0.06))
    grids.build(system, look, coarse)
    first = grids.read()
    held = first.grids["density"].copy()
    grids.build(system, look, fine)  # another frame's grid in the same images
    second = grids.read()
    np.testing.assert_array_equal(first.grids["density"], held)
    assert not np.shares_memory(second.grids["density"], first.grids["density"])
    first.give_back()
    first.give_back()  # once only: a second call gives nothing back twice
    grids.build(system, look, fine)
    third = grids.read()
    assert np.shares_memory(third.grids["density"], first.grids["density"])
    assert by_place(third).grids["density"].tobytes() == by_place(second).grids["density"].tobytes()
    fourth = grids.read()  # nothing given back since: new memory
    assert not np.shares_memory(fourth.grids["density"], third.grids["density"])
