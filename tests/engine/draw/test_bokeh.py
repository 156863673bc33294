"""Bokeh discs (addon/engine/draw/bokeh.py): GPU vs the numpy reference, and vs the rasterized sprites they replaced.

The discs go through the product's path (Compositor.splat with a focus), and
the layer they add into (``compositor.resources.raster``) is read back.  GPU and
reference add the same discs in the same order per pixel; they may differ
only in how a pixel's distance from a disc rounds (the GPU's sqrt and
contractions against numpy's float32): a few ulp of a distance under 200
pixels, ~1e-5 of coverage (llvmpipe: 1e-7), so each pixel is held to 1e-4
of the largest sum its discs could add (``reference.bokeh.accumulate``'s
bound) plus float32 rounding of the sum itself.
"""

import dataclasses

import numpy as np
import pytest

from addon.engine.draw.bokeh import BokehLayer
from addon.engine.draw.compositing import Camera, Compositor
from addon.engine.draw.depth import SceneDepth
from addon.engine.draw.footprint import Focus, Shutter
from addon.engine.draw.frame_resources import FrameResources
from addon.engine.order.tile_lists import TILE
from addon.engine.reference.draw import bokeh as ref
from addon.engine.reference.order.tile_lists import tile_lists
from addon.engine.seam.records import PARTICLE, SPRITE_SHAPE
from addon.engine.settings.settings import effect_settings, render_settings
from addon.engine.simulate.simulation import ParticleSystem
from bench.bokeh_peer import RasterBokeh
from tests.conftest import screen_particles

WIDTH, HEIGHT = 128, 64
MIN_SUBPIXEL_BITS = 4  # the least GL allows a rasterizer
SETTINGS = {"size": 10.0, "color_start": (3.0, 0.2, 1.0), "color_end": (0.1, 2.5, 0.01), "emission_strength": 1.3,
            "color_random": 0.3}


def deep_camera(scale=12.0, width=WIDTH, height=HEIGHT) -> Camera:
    """The pixel grid with clip w = 1 + z / 4 (z 0, 4, 12, 28: w 1, 2, 4, 8, exact divisions) focused at w = 1:
    circles of 0, 6, 9 and 10.5 pixels with ``scale`` 12."""
    camera = Camera.pixel_grid(width, height)
    view_proj = camera.view_proj.copy()
    view_proj[3] = [0.0, 0.0, 0.25, 1.0]
    return Camera(view_proj, width, height, focus=Focus(scale, 1.0))


def particles(rng, n, margin=-16.0, width=WIDTH, height=HEIGHT):
    """Random screen positions, some off the target by up to ``-margin`` pixels, at the depths of deep_camera."""
    return screen_particles(rng, n, width, height, margin)


def layer(host, camera, pos_age, vel_life, bokeh=None, scene_depth=None):
    """The additive layer after one splat of these particles (``bokeh``: the compositor's bokeh pass)."""
    s = effect_settings({"count": len(pos_age), **SETTINGS})
    system = ParticleSystem(host, s)
    system.write_state(pos_age, vel_life)
    compositor = Compositor(FrameResources(host, camera.width, camera.height), render_settings({"emax": 64.0}))
    if scene_depth is not None:
        depth = SceneDepth(host, camera.width, camera.height)
        depth.depth = host.texture("scene_depth", camera.width, camera.height, "DEPTH32F", scene_depth)
        depth.build_coarse()
        compositor.resources.use_depth(depth)
    compositor.bokeh = bokeh(host, camera) if bokeh else None
    compositor.splat(system, camera)
    return s, compositor, host.read(compositor.resources.raster)


def reference(s, camera, pos_age, vel_life, scene_depth=None):
    _, shape, path, color = ref.discs(pos_age, vel_life, camera.view_proj, camera.width, camera.height, s,
                                      camera.pixels_per_unit, camera.focus, camera.shutter)
    return ref.accumulate(np.zeros((camera.height, camera.width, 4), np.float32), shape, path, color, scene_depth)


def assert_close(got, want, bound):
    tolerance = 1e-4 * bound + 2.0**-20 * np.abs(want[..., :3]).max(axis=-1)
    excess = np.abs(got[..., :3] - want[..., :3]).max(axis=-1) - tolerance
    assert excess.max() <= 0, f"{np.count_nonzero(excess > 0)} pixels beyond the tolerance"
    np.testing.assert_array_equal(got[..., 3], want[..., 3])


@pytest.mark.parametrize("motion", [False, True])
def test_discs_match_the_reference(host, rng, motion):
    """Discs of 6 to 10.5 px (bigger than a tile), some across or past the frame's border; streaking with motion."""
    camera = deep_camera()
    if motion:
        camera = dataclasses.replace(camera, shutter=Shutter.still(camera.view_proj, -0.25, 0.25))
    pos_age, vel_life = particles(rng, 400)
    s, _, got = layer(host, camera, pos_age, vel_life)
    want, bound = reference(s, camera, pos_age, vel_life)
    assert want[..., 0].any() and want[0, :, 0].any() and want[:, -1, 0].any(), "discs on the borders"
    assert_close(got, want, bound)


def test_discs_behind_the_scene_are_hidden(host, rng):
    """With the scene's depth, a disc adds only where it is not behind it (the window depths of w 2, 4 and 8
    are 0.5 + ..., a scene between them hides the deeper discs on its half)."""
    camera = deep_camera()
    pos_age, vel_life = particles(rng, 300)
    scene = np.ones((HEIGHT, WIDTH), np.float32)
    _, shape, _, _ = ref.discs(pos_age, vel_life, camera.view_proj, WIDTH, HEIGHT,
                               effect_settings({"count": 300, **SETTINGS}), camera.pixels_per_unit, camera.focus)
    depths = np.unique(SPRITE_SHAPE.read(shape)["depth"])
    scene[:, WIDTH // 2:] = (depths[0] + depths[1]) / 2  # nearer than all but the nearest discs
    s, _, got = layer(host, camera, pos_age, vel_life, scene_depth=scene)
    want, bound = reference(s, camera, pos_age, vel_life, scene)
    unhidden, _ = reference(s, camera, pos_age, vel_life)
    assert (want != unhidden).any(), "some discs are hidden"
    assert_close(got, want, bound)


def test_many_discs_in_one_tile(host, rng):
    """700 discs inside one tile's neighbourhood: lists longer than a shared-memory chunk (256)."""
    pos_age, vel_life = particles(rng, 700)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["position"][:, 2] = 28.0  # w = 8: 10.5 px each
    particle["position"][:, :2] = (rng.uniform(40.0, 40.0 + TILE, (700, 2)) - (WIDTH / 2, HEIGHT / 2)) * 8 + (WIDTH / 2, HEIGHT / 2)
    camera = deep_camera()
    s, compositor, got = layer(host, camera, pos_age, vel_life)
    want, bound = reference(s, camera, pos_age, vel_life)
    counts = tile_lists(*ref.discs(pos_age, vel_life, camera.view_proj, WIDTH, HEIGHT, s,
                                   camera.pixels_per_unit, camera.focus)[1:3], WIDTH, HEIGHT).counts
    assert counts.max() > 2 * 256
    assert_close(got, want, bound)
    np.testing.assert_array_equal(host.read(compositor.bokeh.kept.lists.binning.counts).ravel()[:counts.size],
                                  counts)


def test_no_disc_and_off_screen(host, rng):
    """Particles in focus, and wide discs wholly off the frame: the layer stays zero, no instance is listed."""
    pos_age, vel_life = particles(rng, 300)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["position"][:150, 2] = 0.0  # in focus: splatted
    particle["position"][150:, 2] = np.maximum(particle["position"][150:, 2], 4.0)  # wide, radius <= 10.5: every pixel left of x = 0
    particle["position"][150:, 0] = WIDTH / 2 + (rng.uniform(-60.0, -20.0, 150) - WIDTH / 2) * (1 + particle["position"][150:, 2] / 4)
    s, compositor, got = layer(host, deep_camera(), pos_age, vel_life)
    assert not got.any()
    assert int(host.read(compositor.bokeh.kept.total)[0, 0]) == 0


def test_energy_of_a_disc_inside_the_frame(host):
    """A disc of 10.5 px well inside: its pixels add up to what the particle adds in focus (the area's
    discretisation, below 1%)."""
    pos_age = np.array([[65.6, 29.6, 28.0, 0.5]], np.float32)  # at (64.2, 31.7) on the screen
    vel_life = np.array([[0.0, 0.0, 0.0, 1.0]], np.float32)
    s = effect_settings({"count": 1, **SETTINGS})
    camera = deep_camera()
    _, _, got = layer(host, camera, pos_age, vel_life)
    _, _, _, color = ref.discs(pos_age, vel_life, camera.view_proj, WIDTH, HEIGHT, s,
                               camera.pixels_per_unit, camera.focus)  # a pixel's share: the color over the area
    area = np.pi * (10.5**2 + 1 / 12)
    np.testing.assert_allclose(got[..., :3].sum(axis=(0, 1)), color[0] * area, rtol=0.01)


def test_crowded_tile_keeps_every_disc(host):
    """70,000 discs of 10.5 px over one spot: every one adds its light.  (llvmpipe ends a shader's loops
    after 65535 iterations in all; a walk of one disc an iteration lost the discs past about 65,000, the
    quarter of an extreme depth of field's light that went missing.)"""
    n = 70_000
    pos_age = np.tile(np.array([[16.0, 16.0, 28.0, 0.5]], np.float32), (n, 1))  # w = 8, well inside 32x32
    vel_life = np.tile(np.array([[0.0, 0.0, 0.0, 1.0]], np.float32), (n, 1))
    camera = deep_camera(width=32, height=32)
    s, _, got = layer(host, camera, pos_age, vel_life)
    _, _, _, color = ref.discs(pos_age, vel_life, camera.view_proj, 32, 32, s, camera.pixels_per_unit, camera.focus)
    area = np.pi * (10.5**2 + 1 / 12)
    np.testing.assert_allclose(got[..., :3].sum(axis=(0, 1)), color.astype(np.float64).sum(axis=0) * area, rtol=0.01)


def test_deterministic(host, rng):
    pos_age, vel_life = particles(rng, 500)
    frames = [layer(host, deep_camera(), pos_age, vel_life)[2] for _ in range(2)]
    np.testing.assert_array_equal(frames[0], frames[1])


@pytest.mark.parametrize("motion", [False, True])
def test_same_look_as_the_rasterized_sprites(host, rng, motion):
    """The compute discs against the rasterized ones (bench/bokeh_peer.py) they replaced, added in the same
    order.  The rasterizer snaps each quad's corners to its sub-pixel grid (GL_SUBPIXEL_BITS, at least 4:
    a corner, and with it the disc's place in every fragment, may move 1/32 px) and the disc's rim falls
    from full to none over one pixel, so a pixel's value may move by 1/32 of what its discs can add, and
    the frame's sum by as much (llvmpipe, 8 bits: 3e-5 of it with motion blur, 2e-6 without; an H100 more)."""
    camera = deep_camera()
    if motion:
        camera = dataclasses.replace(camera, shutter=Shutter.still(camera.view_proj, -0.25, 0.25))
    pos_age, vel_life = particles(rng, 400)
    s, _, got = layer(host, camera, pos_age, vel_life)
    _, _, rasterized = layer(host, camera, pos_age, vel_life, bokeh=lambda host, camera: RasterBokeh(host))
    _, bound = reference(s, camera, pos_age, vel_life)
    snap = 2.0 ** -(MIN_SUBPIXEL_BITS + 1)
    difference = np.abs(got - rasterized)[..., :3].max(axis=-1)
    worst = (difference / np.maximum(bound, 1e-30)).max()
    assert (difference <= snap * bound).all(), f"a pixel differs by {worst:.2e} of what its discs can add"
    assert abs(got[..., :3].sum() - rasterized[..., :3].sum()) <= snap * bound.sum()
    assert rasterized[..., :3].max() > 0


def test_lists_grow_at_a_check(host, rng):
    """Lists first sized for one tile a particle: a compositor that checks every second draw drops the
    instances beyond them on the first draw, and is exact from the check on."""
    pos_age, vel_life = particles(rng, 300, margin=0.0)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["position"][:, 2] = 28.0  # 10.5 px discs: 4 to 9 tiles each
    particle["position"][:, :2] = (rng.uniform(0.0, 1.0, (300, 2)) * (WIDTH, HEIGHT) - (WIDTH / 2, HEIGHT / 2)) * 8 + (WIDTH / 2,
                                                                                                       HEIGHT / 2)
    camera = deep_camera()
    s = effect_settings({"count": len(pos_age), **SETTINGS})
    system = ParticleSystem(host, s)
    system.write_state(pos_age, vel_life)
    compositor = Compositor(FrameResources(host, WIDTH, HEIGHT), render_settings({"emax": 64.0}))
    compositor.bokeh = BokehLayer(host, WIDTH, HEIGHT, check_every=2)
    want, bound = reference(s, camera, pos_age, vel_life)
    draws = []
    for _ in range(2):
        compositor.splat(system, camera)
        draws.append(host.read(compositor.resources.raster))
        compositor.resolve()
    kept = compositor.bokeh.kept
    assert int(host.read(kept.total)[0, 0]) > 1024, "more instances than the first lists hold"
    assert np.abs(draws[0] - want).max() > 0.01 * want.max(), "instances beyond the first lists are dropped"
    assert_close(draws[1], want, bound)
    assert kept.lists.capacity >= int(host.read(kept.total)[0, 0])
