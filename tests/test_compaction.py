"""Compaction of live particles (keep, scan, scatter) and the splat reading through it."""

import numpy as np
import pytest
from test_kernels import moving_emitter, splat_case

from addon.engine import compositing, simulation
from addon.engine.reference import compaction as ref_compaction
from addon.engine.settings import effect_settings, render_settings


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
    pos_age[::3, 3] = -0.5  # unborn
    vel_life[1::7, 3] = -1.0  # dead
    pos_age[5, 0] = np.nan
    system.write_state(pos_age, vel_life)
    system.live.compact(system.textures)
    np.testing.assert_array_equal(system.live.read_index(), ref_compaction.live_index(pos_age, vel_life))


def test_live_splat_equals_full_splat(host):
    """The splat over compacted live slots adds exactly what the full splat adds."""
    width, height = 96, 64
    s = effect_settings({"count": 4000, "emission": "BURST", "lifetime": 0.6, "lifetime_random": 0.8, "size": 0.5,
                         "velocity": (20.0, 15.0, 0.0), "velocity_random": 10.0})
    system = simulation.ParticleSystem(host, s)
    emitter = moving_emitter((48, 32, 0))
    for _ in range(10):
        system.step(1 / 24, emitter, emitter)
    assert 0 < system.live.read_count() < s.count
    camera = compositing.Camera.pixel_grid(width, height)
    images = []
    for live in (None, system.live):
        compositor = compositing.Compositor(host, width, height, render_settings({"emax": 8.0}))
        compositor.splat(system, camera, live=live)
        images.append(compositor.read_accum())
    assert images[0][0].any()
    np.testing.assert_array_equal(images[0][0], images[1][0])
    np.testing.assert_array_equal(images[0][1], images[1][1])
