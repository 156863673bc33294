"""Alpha-blended sprites drawn in sorted order, and laid over the additive frame."""

import numpy as np
import pytest

from addon.engine import compositing, simulation
from addon.engine.settings import effect_settings, render_settings
from addon.engine.sorting import ParticleSorter, SortKey
from addon.engine.sprites import SpriteLayer

SIZE = 32
START, END = np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.2, 1.0])


def compositor(host):
    return compositing.Compositor(host, SIZE, SIZE, render_settings())


def ortho_camera():
    """World (x, y) in [0, SIZE]^2 onto the target; view depth is world z (camera above, looking down)."""
    view_proj = np.diag([2.0 / SIZE, 2.0 / SIZE, 0.1, 1.0])
    view_proj[:2, 3] = -1.0
    return compositing.Camera(view_proj, SIZE, SIZE)


def stacked_system(host, depths, ages, opacity=0.6):
    """Particles stacked on the center of pixel (16, 16) at the given depths and ages (life 1)."""
    count = len(depths)
    s = effect_settings({"count": count, "blend_mode": "ALPHA", "opacity": opacity, "size": 4.0,
                         "color_start": tuple(START), "color_end": tuple(END), "emission_strength": 1.0})
    system = simulation.ParticleSystem(host, s)
    width, rows = system.pos_age.width, system.pos_age.height
    pos_age = np.zeros((rows * width, 4), np.float32)
    pos_age[:count] = [(16.5, 16.5, z, a) for z, a in zip(depths, ages)]
    vel_life = np.zeros((rows * width, 4), np.float32)
    vel_life[:count, 3] = 1.0
    system.pos_age = host.texture("pos_age", width, rows, "RGBA32F", pos_age.reshape(rows, width, 4))
    system.vel_life = host.texture("vel_life", width, rows, "RGBA32F", vel_life.reshape(rows, width, 4))
    return system


def over_in_order(ages, order, opacity):
    """Premultiplied over of the sprite centers (alpha = opacity there), first drawn at the back."""
    out = np.zeros(4)
    for i in order:
        color = (START + (END - START) * ages[i]) * opacity
        out = np.append(color, opacity) + (1 - opacity) * out
    return out


@pytest.mark.parametrize("method", ["DIRECT", "KEY_INDEX"])
def test_sorted_sprites_blend_back_to_front(host, method):
    depths, ages = [0.3, -0.2, 0.1, 0.25], [0.0, 0.5, 0.9, 0.2]
    system = stacked_system(host, depths, ages)
    layer = SpriteLayer(host, SIZE, SIZE)
    camera = ortho_camera()

    layer.draw([system], compositor(host), camera)
    unsorted = layer.read()[16, 16]
    np.testing.assert_allclose(unsorted, over_in_order(ages, range(4), 0.6), atol=1e-5)

    sorter = ParticleSorter(system, method)
    sorter.full(SortKey.view_depth(np.identity(4)))
    layer.draw([system], compositor(host), camera, [sorter.indices])
    got = layer.read()
    back_to_front = np.argsort(depths)  # smaller view z is farther from a camera looking down -z
    np.testing.assert_allclose(got[16, 16], over_in_order(ages, back_to_front, 0.6), atol=1e-5)
    assert not np.allclose(got[16, 16], unsorted, atol=1e-3), "the order shows"
    # Soft round footprint: fading from the center, nothing beyond the 4-pixel radius.
    assert got[16, 18, 3] < got[16, 16, 3] and got[16, 18, 3] > 0
    assert got[16, 21, 3] == 0 and got[21, 16, 3] == 0 and got[19, 19, 3] == 0


def test_hidden_particles_draw_nothing(host):
    system = stacked_system(host, [0.0, 0.1], [-0.5, 1.5])  # not born yet; past its life
    layer = SpriteLayer(host, SIZE, SIZE)
    layer.draw([system], compositor(host), ortho_camera())
    assert not layer.read().any()


def test_alpha_over_the_additive_frame(host, rng):
    system = stacked_system(host, [0.0], [0.5], opacity=0.8)
    layer = SpriteLayer(host, SIZE, SIZE)
    layer.draw([system], compositor(host), ortho_camera())
    target = compositor(host)
    under = rng.random((SIZE, SIZE, 4), dtype=np.float32)
    target.frame = host.texture("frame", SIZE, SIZE, "RGBA32F", under)
    layer.over(target)
    sprites = layer.read()
    np.testing.assert_allclose(target.read_frame(), sprites + (1 - sprites[..., 3:]) * under, rtol=1e-6, atol=1e-6)
    assert sprites[16, 16, 3] == pytest.approx(0.8)

