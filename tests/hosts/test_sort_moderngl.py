"""The sorting kernels and the sprite stages under the benchmark host (moderngl on Mesa EGL)."""

import numpy as np
import pytest

from addon.engine.draw.sprites import SpriteLayer
from addon.engine.order.sorting import KeyIndexPairs, ParticleSorter
from tests.engine.draw import test_sprites
from tests.engine.order import test_sorting
from tests.hosts.test_moderngl_host import mgl_host  # noqa: F401  (the fixture)


@pytest.mark.parametrize("algorithm", ["BITONIC", "RADIX"])
def test_full_sorts_match_argsort(mgl_host, rng, algorithm):  # noqa: F811
    count = 5003
    depths = test_sorting.key_cases(rng, count)["duplicates"] + rng.random(count, dtype=np.float32)
    system, pos_age, vel_life = test_sorting.system_with_depths(mgl_host, depths, rng)
    pairs = KeyIndexPairs(mgl_host, system.pos_age.width, system.pos_age.height, count)
    pairs.refresh_keys(system, test_sorting.DEPTH, reset_indices=True)
    pairs.full_sort(algorithm)
    keys, indices = test_sorting.read_pairs(mgl_host, pairs)
    want = test_sorting.ref.particle_keys(pos_age, vel_life, test_sorting.DEPTH)
    np.testing.assert_array_equal(keys, np.sort(want))
    np.testing.assert_array_equal(want[indices], keys)


def test_incremental_direct_and_sortedness(mgl_host, rng):  # noqa: F811
    count = 3000
    system, pos_age, vel_life = test_sorting.system_with_depths(mgl_host, rng.random(count, dtype=np.float32), rng)
    sorter = ParticleSorter(system, "DIRECT")
    for _ in range(len(sorter.step.passes) // 20 + 1):
        sorter.incremental(test_sorting.DEPTH, 20)
    assert sorter.sortedness(test_sorting.DEPTH) == (1.0, 1.0)


def test_sprites_blend_back_to_front(mgl_host):  # noqa: F811
    depths, ages = [0.3, -0.2, 0.1], [0.0, 0.5, 0.9]
    system = test_sprites.stacked_system(mgl_host, depths, ages)
    layer = SpriteLayer(mgl_host, test_sprites.SIZE, test_sprites.SIZE)
    layer.draw([system], test_sprites.resources(mgl_host), test_sprites.ortho_camera())
    back_to_front = np.argsort(depths)[::-1]  # larger z is farther under ortho_camera
    np.testing.assert_allclose(layer.read()[16, 16], test_sprites.over_in_order(ages, back_to_front, 0.6), atol=1e-5)
