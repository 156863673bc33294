"""particle_depth.glsl against its numpy reference: nearest lit particle per pixel, footprints, culling."""

import numpy as np
import pytest

from addon.engine.compositing import Camera, Compositor
from addon.engine.particle_depth import FAR, MAX_FOOTPRINT, ParticleDepth
from addon.engine.reference.particle_depth import nearest_depth
from addon.engine.settings import effect_settings, render_settings
from addon.engine.simulation import ParticleSystem

W, H = 40, 24


def depth_case(host, pos_age, vel_life, **values):
    settings = effect_settings({"count": len(pos_age), **values})
    system = ParticleSystem(host, settings)
    system.write_state(pos_age, vel_life)
    camera = Camera.pixel_grid(W, H)
    view = np.identity(4)  # world = view: depth is -z
    layer = ParticleDepth(host, W, H)
    layer.clear()
    layer.add(system, camera, view, Compositor(host, W, H, render_settings()).look_texture(system))
    expected = nearest_depth(pos_age, vel_life, camera.view_proj, -view[2], W, H, settings, camera.pixels_per_unit)
    return layer.read(), expected


def test_random_particles_match_the_reference(host, rng):
    n = 300
    pos_age = np.zeros((n, 4), np.float32)
    pos_age[:, 0] = rng.uniform(-2, W + 2, n)  # some outside the view
    pos_age[:, 1] = rng.uniform(-2, H + 2, n)
    pos_age[:, 2] = rng.uniform(-9.5, 1.0, n)  # depths 0 (clamped: behind the view plane) to 9.5
    pos_age[:, 3] = rng.uniform(-0.5, 2.0, n)  # some unborn, some dead
    vel_life = np.zeros((n, 4), np.float32)
    vel_life[:, 3] = 1.5
    got, expected = depth_case(host, pos_age, vel_life, size=rng.choice([0.3, 1.6]), size_random=0.5, seed=4)
    np.testing.assert_array_equal(got, expected)
    assert (got < FAR).sum() > 100 and (got == FAR).sum() > 100


@pytest.mark.parametrize("size, reach", [(0.4, 1), (3.7, 3), (40.0, MAX_FOOTPRINT)])  # 1: the 2x2 of an antialiased point
def test_footprint_and_nearest_of_two(host, size, reach):
    pos_age = np.array([[20.5, 12.5, -5.0, 0.1], [20.5, 12.5, -3.0, 0.1], [5.5, 5.5, -2.0, 0.1]], np.float32)
    vel_life = np.array([[0, 0, 0, 1.0]] * 3, np.float32)
    got, expected = depth_case(host, pos_age, vel_life, size=size, size_end=1.0)
    np.testing.assert_array_equal(got, expected)
    assert got[12, 20] == 3.0, "the nearer of two particles on one pixel"
    marked = got < FAR
    assert marked[12 - reach: 12 + reach + 1, 20 - reach: 20 + reach + 1].all()
    assert marked[max(5 - reach, 0): 5 + reach + 1, max(5 - reach, 0): 5 + reach + 1].all()
    if reach < 5:
        assert marked.sum() == 2 * (2 * reach + 1) ** 2, "no more than the squares"


def test_particles_without_light_mark_nothing(host):
    pos_age = np.array([[10.5, 10.5, -4.0, 0.1]], np.float32)
    vel_life = np.array([[0, 0, 0, 1.0]], np.float32)
    got, _ = depth_case(host, pos_age, vel_life, emission_strength=0.0)
    assert (got == FAR).all()
