"""GPU sorting through bpy + gpu.init(), diffed against numpy and the pass schedules."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from addon.engine.order.sorting import KENDALL_SAMPLES, KeyIndexPairs, ParticleSorter, SortKey
from addon.engine.primitives import sort_schedule as ss
from addon.engine.reference.order import sorting as ref
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import effect_settings
from addon.engine.simulate import simulation

DEPTH = SortKey.view_depth(np.identity(4))  # key = ordered(z): exact on every GPU


def key_cases(rng, count):
    return {
        "random": rng.standard_normal(count).astype(np.float32) * 100,
        "sorted": np.arange(count, dtype=np.float32),
        "reversed": np.arange(count, dtype=np.float32)[::-1].copy(),
        "all_equal": np.full(count, 3.5, np.float32),
        "duplicates": rng.integers(-3, 4, count).astype(np.float32),
    }


def system_with_depths(host, depths, rng, ages=0.5):
    """A system whose particles sit at z = depths (x random, y their number), alive at ``ages``."""
    count = len(depths)
    system = simulation.ParticleSystem(host, effect_settings({"count": count}))
    pos_age, vel_life = PARTICLE.pack_images({
        "position": np.column_stack([rng.random(count), np.arange(count), depths]),  # y identifies the particle
        "age": ages, "velocity": rng.random((count, 3)), "life": np.ones(count)})
    width, rows = system.pos_age.width, system.pos_age.height
    for name, values in (("pos_age", pos_age), ("vel_life", vel_life)):
        padded = np.zeros((rows * width, 4), np.float32)
        padded[:count] = values
        setattr(system, name, host.texture(name, width, rows, "RGBA32F", padded.reshape(rows, width, 4)))
    return system, pos_age, vel_life


def read_pairs(host, pairs):
    n = pairs.count
    return host.read(pairs.keys).ravel()[:n], host.read(pairs.indices).ravel()[:n]


@pytest.mark.parametrize("count", [1, 2, 1000, 1024, 4096, 5003, 70_001])
def test_full_key_index_sort_matches_argsort(host, rng, count):
    """The product's full sort (sorting.FULL_SORT) through ParticleSorter."""
    for name, depths in key_cases(rng, count).items():
        system, pos_age, vel_life = system_with_depths(host, depths, rng)
        sorter = ParticleSorter(system, "KEY_INDEX")
        sorter.full(DEPTH)
        keys, indices = read_pairs(host, sorter.pairs)
        want = ref.particle_keys(pos_age, vel_life, DEPTH)
        np.testing.assert_array_equal(keys, want[np.argsort(want, kind="stable")], err_msg=name)
        np.testing.assert_array_equal(np.sort(indices), np.arange(count), err_msg=name)
        np.testing.assert_array_equal(want[indices], keys, err_msg=name)
        if len(np.unique(want)) == count:
            np.testing.assert_array_equal(indices, np.argsort(want))


@pytest.mark.parametrize(("block", "fused"), [(2, 1), (64, 1), (64, 2), (64, 3), (256, 3)])
def test_full_sort_shapes_match_argsort(host, rng, block, fused):
    """Every (shared-memory block, fused strides) shape sorts: many long merges at small sizes."""
    for count in (5003, 4096):
        depths = key_cases(rng, count)["duplicates"] + rng.random(count, dtype=np.float32) * 0.5
        system, pos_age, vel_life = system_with_depths(host, depths, rng)
        pairs = KeyIndexPairs(host, system.pos_age.width, system.pos_age.height, count, block, fused)
        pairs.refresh_keys(system, DEPTH, reset_indices=True)
        pairs.full_sort("BITONIC")
        keys, indices = read_pairs(host, pairs)
        want = ref.particle_keys(pos_age, vel_life, DEPTH)
        np.testing.assert_array_equal(keys, np.sort(want))
        np.testing.assert_array_equal(want[indices], keys)
        np.testing.assert_array_equal(np.sort(indices), np.arange(count))


@pytest.mark.parametrize("count", [3, 2048 + 77])
def test_full_direct_sort_reorders_the_state(host, rng, count):
    depths = key_cases(rng, count)["duplicates"]
    system, pos_age, vel_life = system_with_depths(host, depths, rng)
    sorter = ParticleSorter(system, "DIRECT")
    sorter.full(DEPTH)
    got_pos, got_vel = system.read_state()
    order = got_pos[:, 1].astype(int)  # which particle landed in each slot
    np.testing.assert_array_equal(np.sort(order), np.arange(count))
    np.testing.assert_array_equal(got_pos, pos_age[order])
    np.testing.assert_array_equal(got_vel, vel_life[order])
    np.testing.assert_array_equal(got_pos[:, 2], np.sort(depths))


def test_nan_and_hidden_particles_sort_last(host, rng):
    count = 3000
    depths = rng.standard_normal(count).astype(np.float32)
    depths[::7] = np.nan
    ages = np.full(count, 0.5, np.float32)
    ages[::11] = -1.0  # not born yet
    system, pos_age, vel_life = system_with_depths(host, depths, rng, ages)
    sorter = ParticleSorter(system, "KEY_INDEX")
    sorter.full(DEPTH)
    keys, indices = read_pairs(host, sorter.pairs)
    last = np.isnan(depths) | (ages < 0)
    assert (keys[-last.sum():] == 0xFFFFFFFF).all() and last[indices][-last.sum():].all(), "they sort last"
    assert (keys[: -last.sum()] < 0xFFFFFFFF).all()
    np.testing.assert_array_equal(depths[indices][: -last.sum()], np.sort(depths[~last]))


def test_zeros_and_denormals_share_one_key_everywhere(host, rng):
    """-0, +0 and denormals of either sign key as +0 in the reference and on the GPU, whether or
    not the GPU flushes denormals (NVIDIA does, llvmpipe does not): the sort order is the platform's."""
    tiny = np.float32(1.17549435e-38)  # the smallest normal float32
    specials = np.array([0.0, -0.0, 1.4e-45, -1.4e-45, 1e-39, -1e-39, tiny, -tiny], np.float32)
    keys = ref.ordered_key(specials)
    assert (keys[:6] == keys[0]).all() and keys[6] > keys[0] > keys[7]
    system, pos_age, vel_life = system_with_depths(host, specials, rng)
    sorter = ParticleSorter(system, "KEY_INDEX")
    sorter.incremental(DEPTH, 0)  # keys in slot order
    gpu_keys = read_pairs(host, sorter.pairs)[0]
    np.testing.assert_array_equal(gpu_keys, ref.particle_keys(pos_age, vel_life, DEPTH))
    np.testing.assert_array_equal(gpu_keys, keys)


@pytest.mark.parametrize("method", ["DIRECT", "KEY_INDEX"])
@pytest.mark.parametrize("count", [1000, 4099])
def test_incremental_passes_match_schedule_across_frames_and_reset(host, rng, method, count):
    depths = key_cases(rng, count)["duplicates"] + rng.random(count, dtype=np.float32)
    system, pos_age, vel_life = system_with_depths(host, depths, rng)
    sorter = ParticleSorter(system, method)
    keys = ref.particle_keys(pos_age, vel_life, DEPTH)
    order = np.arange(count)
    step = ss.SortStep(count)

    def check():
        if method == "DIRECT":
            got = PARTICLE.read_images(*system.read_state())["position"][:, 1].astype(int)
        else:
            got = read_pairs(host, sorter.pairs)[1]
        np.testing.assert_array_equal(got, order)

    inversions = ss.inversions(keys)
    for passes in (5, 0, 9, 17):  # frames with different pass counts resume where the last stopped
        sorter.incremental(DEPTH, passes)
        for p, k in step.take(passes):
            ss.apply_pass(keys, *ss.odd_even_merge_comparators(count, p, k), order)
        check()
        assert ss.inversions(keys) <= inversions
        inversions = ss.inversions(keys)
    sorter.reset()
    step.reset()
    if method == "KEY_INDEX":  # the indices start over from slot order; the state never moved
        keys, order = ref.particle_keys(pos_age, vel_life, DEPTH), np.arange(count)
    sorter.incremental(DEPTH, 6)
    for p, k in step.take(6):
        ss.apply_pass(keys, *ss.odd_even_merge_comparators(count, p, k), order)
    check()


def test_incremental_sort_reaches_full_order(host, rng):
    count = 777
    system, pos_age, vel_life = system_with_depths(host, rng.random(count, dtype=np.float32), rng)
    sorter = ParticleSorter(system, "DIRECT")
    for _ in range(len(ss.odd_even_merge_passes(count)) // 10 + 1):
        sorter.incremental(DEPTH, 10)
    assert sorter.sortedness(DEPTH) == (1.0, 1.0)


@pytest.mark.parametrize("count", [2, 5003])
def test_sortedness_matches_reference(host, rng, count):
    depths = rng.standard_normal(count).astype(np.float32)
    depths[: count // 2] = np.sort(depths[: count // 2])
    system, pos_age, vel_life = system_with_depths(host, depths, rng)
    system.step_index = 5
    sorter = ParticleSorter(system, "DIRECT")
    adjacent, tau = sorter.sortedness(DEPTH)
    want_adjacent, concordant, discordant = ref.sortedness(ref.particle_keys(pos_age, vel_life, DEPTH),
                                                           KENDALL_SAMPLES, 5)
    assert adjacent == want_adjacent / (count - 1)
    assert tau == (concordant - discordant) / (concordant + discordant)
    assert adjacent == pytest.approx(ss.adjacent_in_order(depths))


def test_grid_cell_keys_match_reference(host, rng):
    count = 4000
    system, pos_age, vel_life = system_with_depths(host, np.zeros(count, np.float32), rng)
    particle = PARTICLE.read_images(pos_age, vel_life)
    PARTICLE.read_images(pos_age, vel_life)["position"][:] = rng.uniform(-300, 300, (count, 3)).astype(np.float32)
    particle["position"][5, 0] = np.inf
    system, _, _ = system_with_depths(host, np.zeros(count, np.float32), rng)
    upload = np.zeros((system.pos_age.height * system.pos_age.width, 4), np.float32)
    upload[:count] = pos_age
    system.pos_age = host.texture("pos_age", system.pos_age.width, system.pos_age.height, "RGBA32F",
                                  upload.reshape(system.pos_age.height, system.pos_age.width, 4))
    key = SortKey.grid_cell((-1.0, 2.0, 0.5), 0.25)
    pairs = KeyIndexPairs(host, system.pos_age.width, system.pos_age.height, count)
    pairs.refresh_keys(system, key, reset_indices=True)
    keys, _ = read_pairs(host, pairs)
    np.testing.assert_array_equal(keys, ref.particle_keys(pos_age, vel_life, key))
    assert keys[5] == 0xFFFFFFFF
    # Grid order is a counting sort by cell (three binning passes over the 24-bit Morton keys), stable.
    pairs.bin_sort()
    sorted_keys, indices = read_pairs(host, pairs)
    want = ref.particle_keys(pos_age, vel_life, key)
    np.testing.assert_array_equal(indices, np.argsort(want, kind="stable"))
    np.testing.assert_array_equal(sorted_keys, want[indices])


def test_morton_cells_are_near_in_space():
    """Eight cells of a 2x2x2 block share a key prefix: keys 0-7 are the block at the origin."""
    cells = np.array([(x, y, z) for z in range(2) for y in range(2) for x in range(2)], np.uint32)
    keys = (ref.spread_bits(cells[:, 2]) << 2) | (ref.spread_bits(cells[:, 1]) << 1) | ref.spread_bits(cells[:, 0])
    np.testing.assert_array_equal(np.sort(keys), np.arange(8))
    assert ref.spread_bits(np.uint32(255)) == 0x249249


def test_one_particle_and_empty_sorts(host, rng):
    system, _, _ = system_with_depths(host, np.array([2.0], np.float32), rng)
    for method in ("DIRECT", "KEY_INDEX"):
        sorter = ParticleSorter(system, method)
        sorter.full(DEPTH)
        sorter.incremental(DEPTH, 8)
        assert sorter.sortedness(DEPTH) == (1.0, 1.0)
    empty = KeyIndexPairs(host, 256, 1, 0)
    empty.full_sort()
    assert empty.sortedness() == (1.0, 1.0)
    with pytest.raises(ValueError, match="passes per frame"):
        ParticleSorter(system).incremental(DEPTH, -1)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.floats(-50, 50, width=32) | st.just(float("nan")), min_size=2, max_size=600),
       st.integers(0, 60), st.integers(1, 6))
def test_gpu_passes_never_add_inversions(host, rng, depths, start, passes):
    """Hypothesis: on the GPU, every incremental pass leaves the keys at least as sorted."""
    system, pos_age, vel_life = system_with_depths(host, np.array(depths, np.float32), rng)
    sorter = ParticleSorter(system, "KEY_INDEX")
    sorter.step.take(start % max(1, len(sorter.step.passes)))
    sorter.incremental(DEPTH, 0)  # keys of slot order
    keys = read_pairs(host, sorter.pairs)[0]
    np.testing.assert_array_equal(keys, ref.particle_keys(pos_age, vel_life, DEPTH))
    before = ss.inversions(keys)
    for _ in range(passes):
        sorter.pairs.odd_even_passes(sorter.step.take(1))
        after = ss.inversions(read_pairs(host, sorter.pairs)[0])
        assert after <= before
        before = after


@pytest.mark.parametrize("count", [1, 2, 1000, 1024, 5003, 70_001])
def test_radix_sort_is_stable_and_matches_argsort(host, rng, count):
    for name, depths in key_cases(rng, count).items():
        system, pos_age, vel_life = system_with_depths(host, depths, rng)
        pairs = KeyIndexPairs(host, system.pos_age.width, system.pos_age.height, count)
        pairs.refresh_keys(system, DEPTH, reset_indices=True)
        pairs.full_sort("RADIX")
        keys, indices = read_pairs(host, pairs)
        want = ref.particle_keys(pos_age, vel_life, DEPTH)
        order = np.argsort(want, kind="stable")
        np.testing.assert_array_equal(indices, order, err_msg=name)
        np.testing.assert_array_equal(keys, want[order], err_msg=name)


@pytest.mark.parametrize("method", ["DIRECT", "KEY_INDEX"])
def test_compact_layout_sorts_by_world_depth(host, method):
    """Half-float state stored relative to a moving emitter: the keys fold the state origin in."""
    s = effect_settings({"count": 4000, "state_layout": "COMPACT", "lifetime": 0.5})
    system = simulation.ParticleSystem(host, s)
    emitter = np.identity(4)
    for step in range(12):
        moved = emitter.copy()
        moved[:3, 3] = (0.3 * step, -0.2 * step, 5.0)
        system.step(1 / 24, emitter, moved)
        emitter = moved
    assert np.abs(system.origin).max() > 1.0, "positions are stored relative to the emitter"
    view = np.identity(4)
    view[:3, :3] = [[1, 0, 0], [0, 0, 1], [0, -1, 0]]  # looking along +y
    key = SortKey.view_depth(view, spawn=emitter[:3, 3])
    sorter = ParticleSorter(system, method)
    sorter.full(key)
    assert sorter.sortedness(key) == (1.0, 1.0)
    pos_age, vel_life = system.read_state()  # world positions
    order = np.arange(s.count) if method == "DIRECT" else read_pairs(host, sorter.pairs)[1]
    particle = PARTICLE.read_images(pos_age[order], vel_life[order])
    shows = (particle["age"] >= 0) & (particle["age"] < particle["life"])
    depth = particle["position"][shows] @ view[2, :3]
    assert shows.sum() > 100 and np.all(np.diff(depth) >= -1e-3)
    waiting = (particle["life"] == 0) & (particle["age"] < 0)
    keys = read_pairs(host, sorter.pairs)[0]
    if method == "KEY_INDEX" and waiting.any():
        assert (keys[waiting] < 0xFFFFFFFF).all(), "waiting particles are keyed at the emitter"


def test_waiting_particles_are_keyed_at_the_spawn_point(host, rng):
    count = 1000
    system, pos_age, vel_life = system_with_depths(host, rng.standard_normal(count).astype(np.float32), rng)
    spawn_key = SortKey.view_depth(np.identity(4), spawn=(0.0, 0.0, 0.25))
    pairs = KeyIndexPairs(host, system.pos_age.width, system.pos_age.height, count)
    # Waiting (age < 0, life 0) particles take the spawn's key; dead ones (life < 0) sort last.
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["age"][:100], particle["life"][:100] = -0.2, 0.0
    particle["life"][100:150] = -1.0
    width, rows = system.pos_age.width, system.pos_age.height
    for name, values in (("pos_age", pos_age), ("vel_life", vel_life)):
        padded = np.zeros((rows * width, 4), np.float32)
        padded[:count] = values
        setattr(system, name, host.texture(name, width, rows, "RGBA32F", padded.reshape(rows, width, 4)))
    pairs.refresh_keys(system, spawn_key, reset_indices=True)
    keys = read_pairs(host, pairs)[0]
    np.testing.assert_array_equal(keys, ref.particle_keys(pos_age, vel_life, spawn_key))
    assert len(set(keys[:100])) == 1 and (keys[100:150] == 0xFFFFFFFF).all()
