"""Alpha sprites (addon/engine/draw/sprites.py) through the product's path against reference/draw/sprites.py and
reference/order/tile_lists.py: every intermediate buffer, then the blended layer and the frame under it.

The footprints come from `precise` arithmetic (window coordinates through div_rn, the radius, the look)
and the sweep here is half a second (velocity * 0.5 is exact, so a fused multiply-add changes nothing):
shapes, streaks, colors and depth keys are held bit for bit, and with them everything integer after them
(the depth order, the tiles per sprite, their scan and total, the instances, the per-tile lists).
The blend is float work the compiler may contract (dot products, color += transmittance * sprite) through
an exp() GLSL allows 3 + 2|x| ulp (x = -4 distance^2 down to -4: 11 ulp of a value at most 1, 7e-7).  A
sprite's coverage moves by about 1e-6 then (the exp's error, and a few ulp of distance^2 through the
Gaussian's slope of at most 4); the coverage is continuous at the radius (it reaches 0 there), so a
pixel on the rim flipping in or out moves by no more.  What a sprite's error does to a pixel is scaled by
the transmittance in front of it, so each pixel is held to 1e-5 (ten times that) of the sum over the
sprites it tests of their largest folded channel times that transmittance (``reference.sprites.blend``'s
bound); a pixel no sprite reaches must be exactly zero.  llvmpipe: within 4e-7 of the bound.  Leaving out
the stop of opaque pixels after a chunk moves the crowded case by 1.3e-4 of it: the tolerance sees that.
(A pixel whose transmittance lands within rounding of 1/4096 at a chunk's end could stop on one side and
not the other, by up to 1/4096 of what follows; the fixed seeds have none.)
"""

import dataclasses

import numpy as np
import pytest

from addon.engine.draw.compositing import Camera, Compositor, perspective
from addon.engine.draw.depth import SceneDepth
from addon.engine.draw.footprint import Focus
from addon.engine.draw.frame_resources import FrameResources
from addon.engine.draw.sprites import DEPTH_KEYS, SpriteLayer
from addon.engine.order.tile_lists import TILE, TILE_CHUNK, WALKS
from addon.engine.reference.draw import sprites as ref
from addon.engine.reference.order.tile_lists import tile_lists
from addon.engine.seam import records
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import effect_settings, render_settings
from addon.engine.simulate.simulation import ParticleSystem

WIDTH, HEIGHT = 64, 48
SHUTTER = 0.5  # velocity * SHUTTER is exact
SETTINGS = {"blend_mode": "ALPHA", "opacity": 0.7, "size": 4.0, "size_random": 0.9, "size_end": 0.5,
            "color_start": (2.0, 0.3, 0.1), "color_end": (0.1, 0.5, 1.5), "color_random": 0.4,
            "emission_strength": 1.5, "seed": 3}
BLEND_TOLERANCE = 1e-5  # of a pixel's bound (the module's docstring says why)


def effect(host, pos_age, vel_life=None, **values):
    """An Alpha effect whose particles are exactly these (life 1, at rest unless ``vel_life`` says)."""
    pos_age = np.asarray(pos_age, np.float32)
    if vel_life is None:
        vel_life = np.zeros((len(pos_age), 4), np.float32)
        PARTICLE.read_image("vel_life", vel_life)["life"][:] = 1.0
    system = ParticleSystem(host, effect_settings({"count": len(pos_age), **SETTINGS, **values}))
    system.write_state(pos_age, np.asarray(vel_life, np.float32))
    return system, pos_age, np.asarray(vel_life, np.float32)


def scene(rng, n=40):
    """A few dozen sprites over a 64x48 target (world x, y are pixels, z in [-10, 10] inside the depth range)
    with the edge cases in the first slots: overlapping, equal depths, off screen, across tile edges, hidden."""
    pos_age = np.column_stack([rng.uniform(-3, [WIDTH + 3, HEIGHT + 3], (n, 2)), rng.uniform(-8, 8, n),
                               rng.uniform(0, 0.99, n)]).astype(np.float32)
    particle = PARTICLE.read_image("pos_age", pos_age)
    particle["position"][0:6, :2] = rng.normal((20, 20), 2.0, (6, 2))  # a pile over one spot
    particle["position"][6:10, :2] = rng.normal((40, 30), 1.5, (4, 2))
    particle["position"][6:10, 2] = 1.25  # equal depths: equal keys, kept in list order
    particle["position"][10, :2] = (-40, 20)  # off screen left: no tile
    particle["position"][11, :2] = (WIDTH + 30, HEIGHT + 30)  # off screen beyond the far corner
    particle["position"][12, :2] = (TILE, 2 * TILE)  # on a tile corner: four tiles
    particle["position"][13, :2] = (3 * TILE + 0.5, 5.0)  # across a vertical tile edge
    particle["age"][14] = -0.5  # not born yet
    particle["age"][15] = 1.5  # dead
    particle["position"][16, 2] = 20.0  # beyond the far clip (window depth 1.5)
    particle["position"][17, :2] = (1.0, HEIGHT - 1.0)  # overhanging the frame's corner
    return pos_age


def velocities(rng, n):
    vel_life = np.column_stack([rng.normal(0, 30, (n, 2)), rng.normal(0, 2, n), np.ones(n)]).astype(np.float32)
    PARTICLE.read_image("vel_life", vel_life)["velocity"][1::3] = 0.0  # some round among the streaks
    return vel_life


def draw(host, effects, camera, shutter=0.0, scene_depth=None, walk="BLOCKS"):
    compositor = Compositor(FrameResources(host, camera.width, camera.height), render_settings())
    if scene_depth is not None:
        depth = SceneDepth(host, camera.width, camera.height)
        depth.depth = host.texture("scene_depth", camera.width, camera.height, "DEPTH32F", scene_depth)
        depth.build_coarse()
        compositor.resources.use_depth(depth)
    layer = SpriteLayer(host, camera.width, camera.height, walk=walk)
    layer.draw([system for system, _, _ in effects], compositor.resources, camera, shutter=shutter)
    return layer


def linear(host, texture, count, channels=1):
    """The first ``count`` elements of a linear image (element i at texel (i % width, i / width))."""
    values = host.read(texture).reshape(-1, channels)[:count]
    return values[:, 0] if channels == 1 else values


def reference_footprints(effects, camera, shutter=0.0):
    """The frame's sprite list: every effect's footprints one after another, as the layer lists them."""
    parts = [ref.footprints(pos_age, vel_life, camera.view_proj, camera.width, camera.height, system.settings,
                            camera.pixels_per_unit, shutter, focus=camera.focus) for system, pos_age, vel_life in effects]
    return [np.concatenate(values) for values in zip(*parts)]


def check(host, effects, camera, shutter=0.0, scene_depth=None, walk="BLOCKS", rtol=0.0):
    """Draw, diff every buffer against the reference, and return the reference's (shapes, tiles per sprite in
    slot order, lists, layer) and the GPU's layer.  ``rtol``: shapes and colors within it (a GPU's sqrt need
    not round correctly: depth of field's widening); the lists and the blend then follow the GPU's exactly."""
    layer = draw(host, effects, camera, shutter, scene_depth, walk)
    shape, streak, color, key = reference_footprints(effects, camera, shutter)
    count = len(key)
    sprites = layer.list
    gpu_shape, gpu_color = linear(host, sprites.shapes, count, 4), linear(host, sprites.colors, count, 4)
    np.testing.assert_allclose(gpu_shape, shape, rtol=rtol, atol=0)
    np.testing.assert_allclose(gpu_color, color, rtol=rtol, atol=0)
    shape, color = gpu_shape, gpu_color
    entry = records.SPRITE_ENTRY
    np.testing.assert_array_equal(entry.read_image("sprite_streaks", linear(host, sprites.streaks, count, 4))["streak"],
                                  streak)
    np.testing.assert_array_equal(entry.read_image("sprite_keys", host.read(sprites.keys).reshape(-1, 1)[:count])["key"],
                                  key)
    order = ref.depth_order(key)
    np.testing.assert_array_equal(linear(host, sprites.depth_sprites, count), order)

    lists = tile_lists(shape, streak, camera.width, camera.height, order, whole_rows=True)
    np.testing.assert_array_equal(linear(host, sprites.instance_counts, count), lists.item_counts)
    np.testing.assert_array_equal(linear(host, sprites.instance_offsets, count), lists.item_offsets)
    total = int(host.read(layer.kept.total)[0, 0])
    assert total == len(lists.tiles)
    kept = layer.kept.lists
    np.testing.assert_array_equal(linear(host, kept.tiles, total), lists.tiles)
    np.testing.assert_array_equal(linear(host, kept.sprites, total), lists.items)
    tiles = len(lists.counts)
    np.testing.assert_array_equal(linear(host, kept.binning.counts, tiles), lists.counts)
    np.testing.assert_array_equal(linear(host, kept.binning.offsets, tiles), lists.offsets)
    np.testing.assert_array_equal(linear(host, kept.binning.items, total), lists.binned)

    want, bound = ref.blend(shape, streak, color, lists, camera.width, camera.height, scene_depth)
    got = layer.read()
    assert_blend_close(got, want, bound)
    tiles = np.zeros(count, np.int64)
    tiles[order] = lists.item_counts
    return shape, tiles, lists, want, got


def assert_blend_close(got, want, bound):
    error = np.abs(got.astype(np.float64) - want).max(axis=-1)
    excess = error - BLEND_TOLERANCE * bound
    assert excess.max() <= 0, (f"{np.count_nonzero(excess > 0)} pixels beyond the tolerance, worst "
                               f"{(error / np.maximum(bound, 1e-30)).max():.2e} of the bound")
    np.testing.assert_array_equal(got[bound == 0], 0)


def pixel_grid(width=WIDTH, height=HEIGHT):
    return Camera.pixel_grid(width, height)


@pytest.mark.parametrize("walk", WALKS)
def test_scene_matches_the_reference(host, rng, walk):
    shape, tiles, lists, want, _ = check(host, [effect(host, scene(rng))], pixel_grid(), walk=walk)
    radius = records.SPRITE_SHAPE.read(shape)["radius"]
    assert (radius[10:12] > 0).all() and not tiles[10:12].any(), "off screen: a radius, no tiles"
    assert (radius[14:17] == 0).all(), "hidden: no radius"
    assert tiles[12] == 4 and tiles[13] == 2, "across tile edges"
    assert lists.counts.max() >= 6 and want[..., 3].max() > 0.5


def test_streaks_match_the_reference(host, rng):
    pos_age = scene(rng)
    effects = [effect(host, pos_age, velocities(rng, len(pos_age)))]
    check(host, effects, pixel_grid(), shutter=SHUTTER)
    streak = reference_footprints(effects, pixel_grid(), SHUTTER)[1]
    assert np.abs(streak).max() > 1.5 * TILE and (streak == 0).all(axis=1).any(), "long streaks and round sprites"


def test_alpha_sprites_colored_by_speed_match_the_reference(host, rng):
    """Color by Speed on the sprite list: each sprite's color from its speed (some still) against the reference."""
    pos_age = scene(rng)
    effects = [effect(host, pos_age, velocities(rng, len(pos_age)), color_by="SPEED", color_speed=40.0)]
    check(host, effects, pixel_grid(), shutter=SHUTTER)
    system, _, vel_life = effects[0]
    camera = pixel_grid()
    colors = [ref.footprints(pos_age, vel_life, camera.view_proj, WIDTH, HEIGHT, settings, camera.pixels_per_unit,
                             SHUTTER)[2] for settings in (system.settings, dataclasses.replace(system.settings,
                                                                                               color_by="AGE"))]
    assert not np.allclose(*colors), "the speed shows"


def test_out_of_focus_sprites_match_the_reference(host, rng):
    """Depth of field: every sprite widened by a circle of confusion of 6 px, fainter by the area ratio."""
    camera = dataclasses.replace(pixel_grid(), focus=Focus(12.0, 0.5))  # |w - 0.5| = 0.5: 6 px
    effects = [effect(host, scene(rng))]
    radius = records.SPRITE_SHAPE.read(check(host, effects, camera, rtol=1e-6)[0])["radius"]
    sharp = records.SPRITE_SHAPE.read(reference_footprints(effects, pixel_grid())[0])["radius"]
    shown = sharp > 0
    assert (radius[shown] >= 6.0).all() and (radius[shown] > sharp[shown]).all()


def test_two_effects_interleave_in_one_list(host, rng):
    """The second effect's sprites follow the first's in the list (first_sprite) and sort among them."""
    first, second = scene(rng, 30), scene(rng, 20)
    first_z, second_z = (PARTICLE.read_image("pos_age", p)["position"][:, 2] for p in (first, second))
    second_z[:] = np.round(first_z[:20])  # equal depths across the effects: the first effect's sprites first
    first_z[:20] = second_z
    effects = [effect(host, first), effect(host, second, color_start=(0.2, 2.0, 0.2), seed=9)]
    check(host, effects, pixel_grid())


def test_perspective_and_scene_depth(host, rng):
    """A perspective camera (radii and depths through the division by w) and the scene's depth hiding sprites
    behind it (SPRITE_DEPTH_TEST)."""
    view = np.eye(4)
    view[2, 3] = -6.0  # the camera 6 units back along +z, looking down -z
    camera = Camera(perspective(0.9, WIDTH / HEIGHT, 0.5, 40.0) @ view, WIDTH, HEIGHT)
    n = 48
    pos_age = np.column_stack([rng.uniform(-4, 4, n), rng.uniform(-3, 3, n), rng.uniform(-4, 4, n),
                               rng.uniform(0, 0.99, n)]).astype(np.float32)
    effects = [effect(host, pos_age, size=0.3)]
    shape = records.SPRITE_SHAPE.read(reference_footprints(effects, camera)[0])
    depths = np.sort(shape["depth"][shape["radius"] > 0])
    scene_depth = np.ones((HEIGHT, WIDTH), np.float32)
    scene_depth[:, WIDTH // 2:] = depths[len(depths) // 2]  # the right half hides the farther half
    want = check(host, effects, camera, scene_depth=scene_depth)[3]
    unhidden = check(host, effects, camera)[3]
    assert (want[:, WIDTH // 2:] != unhidden[:, WIDTH // 2:]).any() and (want[:, :WIDTH // 2] ==
                                                                          unhidden[:, :WIDTH // 2]).all()


def test_depth_keys_order_sprites_by_distance_in_16_bits():
    """sprite_shape.glsl's depth_key (the GPU's keys equal these in the tests above): a perspective camera's key
    follows the view distance in steps of 1/2048 of it from 1/1024 unit to 2^22 units, an orthographic camera's
    the window depth; every key below HIDDEN_KEY, so two radix passes sort them."""
    view = np.eye(4)
    view[2, 3] = -6.0
    camera = perspective(0.9, 1.5, 0.1, 1000.0) @ view
    distance = np.geomspace(1 / 1024, 2.0 ** 21.99, 20000).astype(np.float32)
    keys = ref.depth_keys(camera, distance, np.zeros_like(distance))
    assert (np.diff(keys.astype(np.int64)) >= 0).all() and keys[0] == 0 and keys[-1] < ref.HIDDEN_KEY
    apart = ref.depth_keys(camera, distance * np.float32(1 + 1 / 1000), np.zeros_like(distance))
    assert (apart > keys).all(), "a thousandth of the distance farther: a later key"
    assert ref.depth_keys(camera, np.float32([0.0, 1e-6, 1e30]), np.zeros(3))[[0, 1, 2]].tolist() == [
        0, 0, ref.HIDDEN_KEY - 1]
    assert ref.HIDDEN_KEY == DEPTH_KEYS - 1 == 0xFFFF
    window_depth = np.float32([0.0, 0.5, 1.0])
    orthographic = Camera.pixel_grid(64, 36).view_proj
    assert ref.depth_keys(orthographic, np.ones(3), window_depth).tolist() == [0, 32767, ref.HIDDEN_KEY - 1]


def test_crowded_tile_stops_opaque_pixels(host, rng):
    """More sprites on one tile than a chunk holds: pixels opaque after the first chunk stop there."""
    n = 2 * TILE_CHUNK + 40
    pos_age = np.column_stack([rng.uniform(18, 30, (n, 2)), rng.permutation(n) / n * 10 - 5,
                               rng.uniform(0, 0.99, n)]).astype(np.float32)
    effects = [effect(host, pos_age, opacity=0.9, size_random=0.3)]
    _, _, lists, want, _ = check(host, effects, pixel_grid())
    assert lists.counts.max() > 2 * TILE_CHUNK and want[..., 3].max() > 1 - 1 / 4096


def test_empty_frame(host, rng):
    """Every sprite hidden or off screen: no instance, a clear layer."""
    pos_age = scene(rng, 20)
    particle = PARTICLE.read_image("pos_age", pos_age)
    particle["age"][:10] = -1.0
    particle["position"][10:, 0] += 2 * WIDTH
    _, _, lists, _, got = check(host, [effect(host, pos_age)], pixel_grid())
    assert len(lists.tiles) == 0 and not got.any()


def test_alpha_over_matches_the_reference(host, rng):
    """The resolve's frame = sprites over the additive light: one multiply-add a channel (1e-6: a contraction's
    one rounding less)."""
    effects = [effect(host, scene(rng))]
    layer = draw(host, effects, pixel_grid())
    light, lit = (Compositor(FrameResources(host, WIDTH, HEIGHT), render_settings()) for _ in range(2))
    for target in (light, lit):
        target.add(effects[0][0], pixel_grid())  # the same particles splatted under their sprites
    light.resolve()
    lit.resolve(layer.target)
    under = light.read_frame()
    assert under.any()
    np.testing.assert_allclose(lit.read_frame(), ref.alpha_over(layer.read(), under), rtol=1e-6, atol=1e-6)
