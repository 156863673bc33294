"""Alpha sprites binned into screen tiles and blended front to back, against the rasterized peer."""

import numpy as np
import pytest

from addon.engine.draw import compositing
from addon.engine.draw.frame_resources import FrameResources
from addon.engine.draw.sprites import SpriteLayer
from addon.engine.order.sorting import ParticleSorter, SortKey
from addon.engine.order.tile_lists import VIEWPORT_CHECK_EVERY, WALKS
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import effect_settings, render_settings
from addon.engine.simulate import simulation
from bench.sprite_peer import draw_rasterized

SIZE = 32
START, END = np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.2, 1.0])


def resources(host, width=SIZE, height=SIZE):
    return FrameResources(host, width, height)


def compositor(host, width=SIZE, height=SIZE):
    return compositing.Compositor(resources(host, width, height), render_settings())


def ortho_camera(width=SIZE, height=SIZE):
    """World (x, y) are pixels; larger world z is farther (window depth 0.5 + z / 20)."""
    return compositing.Camera.pixel_grid(width, height)


# The view matching ortho_camera for the rasterized peer's back-to-front sort: view z = -world z.
VIEW = np.diag([1.0, 1.0, -1.0, 1.0])


def system_at(host, pos_age, vel_life=None, opacity=0.6, size=4.0, **values):
    """An Alpha effect whose particles are exactly ``pos_age`` (life 1 unless ``vel_life`` says)."""
    pos_age = np.asarray(pos_age, np.float32)
    count = len(pos_age)
    s = effect_settings({"count": count, "blend_mode": "ALPHA", "opacity": opacity, "size": size,
                         "color_start": tuple(START), "color_end": tuple(END), "emission_strength": 1.0, **values})
    system = simulation.ParticleSystem(host, s)
    if vel_life is None:
        vel_life = np.zeros((count, 4), np.float32)
        PARTICLE.read_image("vel_life", vel_life)["life"][:] = 1.0
    system.write_state(pos_age, np.asarray(vel_life, np.float32))
    return system


def stacked_system(host, depths, ages, opacity=0.6):
    """Particles stacked on the center of pixel (16, 16) at the given depths and ages (life 1)."""
    return system_at(host, [(16.5, 16.5, z, a) for z, a in zip(depths, ages)], opacity=opacity)


def over_in_order(ages, order, opacity):
    """Premultiplied over of the sprite centers (alpha = opacity there), first drawn at the back."""
    out = np.zeros(4)
    for i in order:
        color = (START + (END - START) * ages[i]) * opacity
        out = np.append(color, opacity) + (1 - opacity) * out
    return out


def test_sprites_blend_nearest_first_whatever_the_slot_order(host):
    depths, ages = [0.3, -0.2, 0.1, 0.25], [0.0, 0.5, 0.9, 0.2]
    layer = SpriteLayer(host, SIZE, SIZE)
    layer.draw([stacked_system(host, depths, ages)], resources(host), ortho_camera())
    got = layer.read()
    back_to_front = np.argsort(depths)[::-1]  # larger z is farther
    np.testing.assert_allclose(got[16, 16], over_in_order(ages, back_to_front, 0.6), atol=1e-5)
    # Soft round footprint: fading from the center, nothing beyond the 4-pixel radius.
    assert got[16, 18, 3] < got[16, 16, 3] and got[16, 18, 3] > 0
    assert got[16, 21, 3] == 0 and got[21, 16, 3] == 0 and got[19, 19, 3] == 0


def test_two_effects_interleave_by_depth(host):
    near_and_far = stacked_system(host, [-0.3, 0.3], [0.0, 0.0])
    middle = stacked_system(host, [0.0], [0.9])
    layer = SpriteLayer(host, SIZE, SIZE)
    layer.draw([near_and_far, middle], resources(host), ortho_camera())
    want = over_in_order([0.0, 0.9, 0.0], [2, 1, 0], 0.6)  # ages of near, middle, far; drawn far first
    np.testing.assert_allclose(layer.read()[16, 16], want, atol=1e-5)


def test_hidden_particles_draw_nothing(host):
    system = stacked_system(host, [0.0, 0.1], [-0.5, 1.5])  # not born yet; past its life
    layer = SpriteLayer(host, SIZE, SIZE)
    layer.draw([system], resources(host), ortho_camera())
    assert not layer.read().any()


def test_alpha_over_the_additive_frame(host):
    """The resolve lays the layer over the additive light: frame = sprites + (1 - sprites.a) * light."""
    system = stacked_system(host, [0.0], [0.5], opacity=0.8)
    layer = SpriteLayer(host, SIZE, SIZE)
    layer.draw([system], resources(host), ortho_camera())
    light, lit = compositor(host), compositor(host)
    for target in (light, lit):
        target.add(system, ortho_camera())  # the same particle splatted under its sprite
    light.resolve()
    lit.resolve(layer.target)
    sprites, under = layer.read(), light.read_frame()
    assert under[16, 16, :3].all() and sprites[16, 16, 3] == pytest.approx(0.8)
    np.testing.assert_allclose(lit.read_frame(), sprites + (1 - sprites[..., 3:]) * under, rtol=1e-6, atol=1e-6)


def rasterized(host, systems, target_resources, camera, width, height):
    """Today's sprites: each system fully sorted back to front, rasterized in that order."""
    indices = []
    for system in systems:
        sorter = ParticleSorter(system, "KEY_INDEX")
        sorter.full(SortKey.view_depth(VIEW))
        indices.append(sorter.indices)
    target = host.texture("raster_sprites", width, height, "RGBA32F")
    draw_rasterized(host, target, systems, target_resources, camera, indices)
    return host.read(target)


@pytest.mark.parametrize("case", ["scattered", "crowded tile"])
def test_look_matches_the_rasterized_sprites(host, rng, case):
    """Distinct depths, sprites of 0.3 to 9 pixels: both orders agree, so the looks agree within 1/255."""
    width, height = 80, 48
    count = 1500 if case == "scattered" else 700
    if case == "scattered":
        xy = rng.uniform(-6, [width + 6, height + 6], (count, 2))
    else:  # more sprites over one tile than a chunk holds, most pixels turn opaque early
        xy = rng.normal((24.0, 24.0), 3.0, (count, 2))
    depths = rng.permutation(count) / count - 0.5
    pos_age = np.column_stack([xy, depths, rng.uniform(0, 0.99, count)])
    system = system_at(host, pos_age, opacity=0.35, size=3.0, size_random=0.97, color_random=0.5)
    target = resources(host, width, height)
    camera = ortho_camera(width, height)
    layer = SpriteLayer(host, width, height)
    layer.draw([system], target, camera)
    got = layer.read()
    want = rasterized(host, [system], target, camera, width, height)
    assert want[..., 3].max() > 0.5, "a scene worth comparing"
    np.testing.assert_allclose(got, want, atol=1 / 255)


@pytest.mark.parametrize("shutter", [0.0, 0.5])
def test_block_walk_blends_the_same_layer(host, rng, shutter):
    """The BLOCKS walk visits fewer sprites per pixel, never others: the layer is bitwise the same,
    over a crowded tile (lists of several chunks, pixels turning opaque), scattered sprites and streaks."""
    width, height, count = 80, 48, 2000
    xy = np.where(rng.random((count, 1)) < 0.5, rng.normal((24.0, 24.0), 3.0, (count, 2)),
                  rng.uniform(-6, [width + 6, height + 6], (count, 2)))
    pos_age = np.column_stack([xy, rng.permutation(count) / count - 0.5, rng.uniform(0, 0.99, count)])
    vel_life = np.column_stack([rng.normal(0, 12, (count, 2)), np.zeros(count), np.ones(count)])
    system = system_at(host, pos_age, vel_life, opacity=0.3, size=3.0, size_random=0.97)
    layers = []
    for walk in WALKS:
        layer = SpriteLayer(host, width, height, walk=walk)
        layer.draw([system], resources(host, width, height), ortho_camera(width, height), shutter=shutter)
        layers.append(layer.read())
    assert layers[0][..., 3].max() > 0.9 and (layers[0][..., 3] == 0).any()
    for layer in layers[1:]:
        np.testing.assert_array_equal(layer, layers[0])


def test_stretched_sprites_streak_along_their_motion(host):
    """shutter > 0: the footprint is swept back along the screen motion (motion blur plugs in here)."""
    pos_age = [(16.5, 16.5, 0.0, 0.5)]
    vel_life = [(8.0, 0.0, 0.0, 1.0)]  # 8 pixels a second along +x
    system = system_at(host, pos_age, vel_life, opacity=0.8, size=2.0)
    layer = SpriteLayer(host, SIZE, SIZE)
    layer.draw([system], resources(host), ortho_camera())
    round_alpha = layer.read()[16, :, 3]
    layer.draw([system], resources(host), ortho_camera(), shutter=1.0)
    streak = layer.read()[16, :, 3]
    assert round_alpha[10] == 0 and streak[10] > 0, "the streak reaches back to where it was"
    assert streak[22] == 0 and streak.max() < round_alpha.max(), "spread over the streak, not ahead of it"


def test_instance_lists_fit_from_the_second_draw(host, rng):
    """Large sprites (about 36 tiles each, lists first sized for 4): a layer checking as the viewport does
    cuts them at tile edges on the first draw only (the first check comes with the second), then
    stays exact until its next check."""
    width = height = 128
    n = 60  # about 2000 instances: more than the first lists' 1024
    pos_age = np.column_stack([rng.uniform(30, 98, (n, 2)), rng.permutation(n) / n - 0.5, np.full(n, 0.5)])
    system = system_at(host, pos_age, opacity=0.5, size=40.0)
    target, camera = resources(host, width, height), ortho_camera(width, height)
    want = rasterized(host, [system], target, camera, width, height)
    layer = SpriteLayer(host, width, height, check_every=VIEWPORT_CHECK_EVERY)
    layer.draw([system], target, camera)
    assert np.abs(layer.read() - want).max() > 0.1, "instances beyond the first lists are dropped"
    for _ in range(2):
        layer.draw([system], target, camera)
        np.testing.assert_allclose(layer.read(), want, atol=1 / 255)
    assert layer.kept.lists.capacity >= int(host.read(layer.kept.total)[0, 0]) > 1024


def test_instance_lists_shrink_to_what_the_sprites_need(host, rng):
    """Small sprites (one tile each) in lists first sized for 4 a sprite: from the second draw the lists
    hold 5/4 of the instances, not the estimate's 4x (binning runs over the whole capacity)."""
    n = 4000
    pos_age = np.column_stack([rng.uniform(8, 120, (n, 2)) // 16 * 16 + 8, rng.permutation(n) / n - 0.5,
                               np.full(n, 0.5)])
    system = system_at(host, pos_age, opacity=0.5, size=1.0)
    target, camera = resources(host, 128, 128), ortho_camera(128, 128)
    layer = SpriteLayer(host, 128, 128, check_every=VIEWPORT_CHECK_EVERY)
    layer.draw([system], target, camera)
    assert layer.kept.lists.capacity == 4 * n
    layer.draw([system], target, camera)
    assert int(host.read(layer.kept.total)[0, 0]) == n
    assert layer.kept.lists.capacity == n * 5 // 4



def test_a_tile_of_tens_of_thousands_of_faint_sprites_blends_every_one(host, rng):
    """32,768 faint sprites over one tile, every pixel open through all 128 chunks of its list, blended alike
    by both walks.  llvmpipe (Mesa's software GL, where the suite runs) ends every loop of a shader
    invocation once all of them together went round 65,535 times; the BLOCKS walk spent two iterations a
    sprite visited and stopped at about 31,000 here (in Sand onto Monkey's pile, 40,216 sprites in one tile,
    it left the tile empty)."""
    count = 32768
    pos_age = np.column_stack([rng.uniform(7.5, 8.5, (count, 2)), rng.uniform(-1, 1, count), np.full(count, 0.5)])
    system = system_at(host, pos_age, opacity=1e-5, size=12.0)
    layers = []
    for walk in WALKS:
        layer = SpriteLayer(host, 16, 16, walk=walk)
        layer.draw([system], resources(host, 16, 16), ortho_camera(16, 16))
        layers.append(layer.read())
    alpha = layers[0][..., 3]
    assert 0.25 < alpha[8, 8] < 1.0 - 1 / 4096, "the centre pixel stays open through the whole list"
    for layer in layers[1:]:
        np.testing.assert_array_equal(layer, layers[0])
