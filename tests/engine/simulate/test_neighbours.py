"""The neighbour grid on the GPU against its numpy reference: every pair within the radius once, in visiting order."""

import numpy as np
import pytest

from addon.engine.reference.simulate import neighbours as ref
from addon.engine.seam.records import PARTICLE
from addon.engine.seam.state import state_size
from addon.engine.settings.settings import SettingsError
from addon.engine.simulate import neighbours
from addon.engine.simulate.neighbours import MAX_NEIGHBOURS, NeighbourGrid


def state(host, positions, alive=None):
    """Full-layout state images of ``positions`` (every slot alive unless ``alive`` says otherwise)."""
    count = len(positions)
    width, rows = state_size(count, host.max_texture_size)
    pos_age = np.zeros((count, 4), np.float32)
    vel_life = np.zeros((count, 4), np.float32)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["position"][:] = positions
    particle["age"][:] = 0.5
    particle["life"][:] = 1.0
    if alive is not None:
        particle["life"][~alive] = -1.0
    images = []
    for name, values in (("pos_age", pos_age), ("vel_life", vel_life)):
        padded = np.zeros((width * rows, 4), np.float32)
        padded[:count] = values
        images.append(host.texture(name, width, rows, "RGBA32F", padded.reshape(rows, width, 4)))
    return (*images, pos_age, vel_life, width, rows)


def gpu_lists(host, positions, radius, alive=None):
    pos_tex, vel_tex, pos_age, vel_life, width, rows = state(host, positions, alive)
    grid = NeighbourGrid(host, len(positions), width, rows)
    grid.build(pos_tex, vel_tex, radius)
    lists = grid.neighbour_lists()
    keys = host.read(grid.keys).ravel()[: len(positions)]
    return grid, lists, keys, pos_age, vel_life


def check_against_reference(host, positions, radius, alive=None):
    grid, lists, keys, pos_age, vel_life = gpu_lists(host, positions, radius, alive)
    inverse = grid.values["grid_inverse_cell"]
    np.testing.assert_array_equal(keys, ref.keys(pos_age, vel_life, inverse, grid.table))
    want, overflow = ref.neighbour_lists(pos_age, vel_life, radius, inverse, grid.table)
    for slot, expected in enumerate(want):
        assert lists[slot, 0] == len(expected), slot
        assert list(lists[slot, 1: 1 + len(expected)]) == expected, slot
    assert grid.read_overflow() == overflow
    return want, overflow


def brute_force_pairs(positions, radius):
    d2 = ref.distance2(positions[:, None, :], positions[None, :, :])
    near = d2 < np.float32(radius) * np.float32(radius)
    np.fill_diagonal(near, False)
    return {(i, j) for i, j in zip(*np.nonzero(near))}


def test_every_pair_within_the_radius_is_found_once_in_the_fixed_order(host, rng):
    positions = rng.uniform(-1.0, 1.0, (3000, 3)).astype(np.float32)
    want, overflow = check_against_reference(host, positions, 0.1)
    assert overflow == 0
    found = [(i, j) for i, js in enumerate(want) for j in js]
    assert len(found) == len(set(found))
    assert set(found) == brute_force_pairs(positions, 0.1)


def test_negative_and_far_cells_that_share_a_hash_bin_meet_each_particle_once(host, rng):
    """A small table (4096 bins) for cells spread over a wide box: many cells share a bin, some of them
    among one particle's 27."""
    clusters = rng.uniform(-500.0, 500.0, (40, 3))
    positions = (clusters[rng.integers(0, 40, 2500)] + rng.normal(0, 0.2, (2500, 3))).astype(np.float32)
    want, _ = check_against_reference(host, positions, 0.25)
    found = [(i, j) for i, js in enumerate(want) for j in js]
    assert set(found) == brute_force_pairs(positions, 0.25)


def test_dead_particles_are_neither_listed_nor_met(host, rng):
    positions = rng.uniform(0.0, 0.5, (1000, 3)).astype(np.float32)
    alive = rng.random(1000) < 0.6
    want, _ = check_against_reference(host, positions, 0.08, alive)
    dead = set(np.flatnonzero(~alive))
    assert all(not want[slot] for slot in dead)
    assert not dead & {j for js in want for j in js}


def test_a_radius_that_puts_every_particle_in_one_cell_is_bounded_and_counts_the_overflow(host, rng):
    positions = rng.uniform(0.0, 0.1, (500, 3)).astype(np.float32)
    grid, lists, *_ = gpu_lists(host, positions, 100.0)
    assert (lists[:, 0] == MAX_NEIGHBOURS).all()
    assert grid.read_overflow() == 500
    check_against_reference(host, positions, 100.0)


def test_a_radius_of_zero_is_a_clear_error(host):
    pos_tex, vel_tex, *_, width, rows = state(host, np.zeros((10, 3), np.float32))
    grid = NeighbourGrid(host, 10, width, rows)
    with pytest.raises(SettingsError, match="interaction_radius must be positive"):
        grid.build(pos_tex, vel_tex, 0.0)


def test_more_particles_than_the_grid_holds_name_the_limit(host):
    with pytest.raises(SettingsError, match=f"at most {neighbours.MAX_INTERACTING:,} particles"):
        NeighbourGrid(host, neighbours.MAX_INTERACTING + 1, 4096, 4097)


def test_the_hash_table_is_a_power_of_two_near_the_count():
    assert neighbours.table_size(1) == neighbours.GRID_TABLE_MIN
    assert neighbours.table_size(5000) == 8192
    assert neighbours.table_size(1 << 26) == neighbours.GRID_TABLE_MAX


def rows_sharing_a_bin(table: int) -> np.ndarray:
    """A cell whose 27 neighbouring cells' rows overlap in the hash table (two rows' bins one or two apart)."""
    for y in range(-3000, 3000, 7):
        for z in range(-50, 50):
            if len(ref.visited_bins(np.array([0, y, z]), table)) < 27:
                return np.array([0, y, z])
    raise AssertionError("no such cell")


def test_a_bin_that_two_rows_around_a_particle_share_is_walked_once(host, rng):
    """Rows of the 27 cells whose bins overlap: the shared bin is walked once, each neighbour met once."""
    centre = rows_sharing_a_bin(neighbours.table_size(250))
    radius = 0.5
    cells = centre + rng.integers(-1, 2, (250, 3))
    positions = ((cells + rng.uniform(0.0, 1.0, (250, 3))) * radius).astype(np.float32)
    want, overflow = check_against_reference(host, positions, radius)
    assert overflow == 0
    found = [(i, j) for i, js in enumerate(want) for j in js]
    assert len(found) == len(set(found))
    assert set(found) == brute_force_pairs(positions, radius)
