"""Compaction of live particles (keep, scan, scatter), rebuilt on first use after the state changed."""

import numpy as np
import pytest

from addon.engine.order.sorting import ParticleSorter, SortKey
from addon.engine.reference.primitives import compaction as ref_compaction
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import effect_settings
from addon.engine.simulate import simulation
from tests.engine.test_kernels import moving_emitter, splat_case


@pytest.mark.parametrize("overrides", [{}, {"emission": "BURST", "lifetime": 0.3, "lifetime_random": 0.9}])
def test_live_index_follows_the_simulation(host, overrides):
    s = effect_settings({"count": 3001, "lifetime": 0.6, **overrides})
    system = simulation.ParticleSystem(host, s)
    assert system.live.read_count() == 0, "nothing is born at the start"
    counts = []
    for _ in range(12):
        system.step(1 / 24, moving_emitter((0, 0, 0)), moving_emitter((0.1, 0, 0)))
        pos_age, vel_life = system.read_state()
        reference = ref_compaction.live_index(pos_age, vel_life)
        np.testing.assert_array_equal(system.live.read_index(), reference)
        counts.append(len(reference))
    assert max(counts) > 0 and len(set(counts)) > 1, counts


def test_compaction_drops_nan_unborn_and_dead(host, rng):
    width, height, n = 64, 32, 700
    camera, system, compositor, pos_age, vel_life, s = splat_case(host, rng, n, width, height, 8.0)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["age"][::3] = -0.5  # unborn
    particle["life"][1::7] = -1.0  # dead
    particle["position"][5, 0] = np.nan
    system.write_state(pos_age, vel_life)
    np.testing.assert_array_equal(system.live.read_index(), ref_compaction.live_index(pos_age, vel_life))


def test_live_slots_follow_restores_and_reorders(host):
    """Compacted on first use after the state changed: after steps, a restore and a direct sort's reorder."""
    s = effect_settings({"count": 3001, "emission": "BURST", "lifetime": 0.4, "lifetime_random": 0.9,
                         "velocity": (0.0, 0.0, 3.0), "velocity_random": 2.0})
    system = simulation.ParticleSystem(host, s)

    def steps(n):
        for _ in range(n):
            system.step(1 / 24, moving_emitter((0, 0, 0)), moving_emitter((0.1, 0, 0)))

    def reference():
        return ref_compaction.live_index(*system.read_state())

    steps(6)
    checkpoint, at_checkpoint = system.snapshot_on_gpu(), reference()
    np.testing.assert_array_equal(system.live.read_index(), at_checkpoint)
    steps(4)
    np.testing.assert_array_equal(system.live.read_index(), reference())
    system.restore(checkpoint)
    np.testing.assert_array_equal(system.live.read_index(), at_checkpoint)
    ParticleSorter(system, "DIRECT").full(SortKey.view_depth(np.identity(4)))
    reordered = reference()
    assert 0 < len(reordered) < s.count and not np.array_equal(reordered, at_checkpoint)
    np.testing.assert_array_equal(system.live.read_index(), reordered)
