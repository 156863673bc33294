"""Additive quads by tiles (addon/engine/draw/quad_tiles.py): GPU vs the numpy reference, and vs the rasterized quads.

The quads go through the product's path (``Compositor.add`` of an additive
SPRITE or STRETCHED effect) and the layer they add into (``compositor.resources.raster``)
is read back.  Against the reference (``reference.quad_tiles.accumulate`` of
the footprints the GPU wrote): the same quads in the same order per pixel, a
float32 sum against float64, held to 1e-5 of the largest sum its quads could
add.  Against the rasterized quads (bench/quad_peer.py): the footprint's math
is raster_quads.glsl's vertex stage (quad_frame.glsl), so they differ by the
raster target's half-float rounding of every add, the rasterizer's snapping
of the corners to its sub-pixel grid and its interpolation of the corner
coordinates.
"""

import dataclasses

import numpy as np
import pytest

from addon.engine import registry
from addon.engine.draw import quad_tiles, raster
from addon.engine.draw.compositing import Camera, Compositor
from addon.engine.draw.depth import SceneDepth
from addon.engine.draw.footprint import Focus, Shutter
from addon.engine.draw.frame_resources import FrameResources
from addon.engine.order.tile_lists import MIN_INSTANCES, TILE_CHUNK, WALKS
from addon.engine.reference.draw import quad_tiles as ref
from addon.engine.reference.draw import raster as ref_raster
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import effect_settings, render_settings
from addon.engine.simulate.simulation import ParticleSystem
from bench.quad_peer import RasterQuads
from tests.conftest import screen_particles

WIDTH, HEIGHT = 96, 64
SETTINGS = {"size": 3.0, "size_random": 0.5, "color_start": (3.0, 0.2, 1.0), "color_end": (0.1, 2.5, 0.01),
            "emission_strength": 1.3, "color_random": 0.3, "blend_mode": "ADD", "particle_type": "SPRITE"}
STRETCHED = {"particle_type": "STRETCHED", "stretch": 0.1}
HALF = 2.0**-10  # half float's ulp, relative: the conversion may truncate (llvmpipe does)


def deep_camera(width=WIDTH, height=HEIGHT) -> Camera:
    """The pixel grid with clip w = 1 + z / 4 (z 0, 4, 12: w 1, 2, 4), near plane at clip z = -w."""
    camera = Camera.pixel_grid(width, height)
    view_proj = camera.view_proj.copy()
    view_proj[3] = [0.0, 0.0, 0.25, 1.0]
    return Camera(view_proj, width, height)


def particles(rng, n, margin=-12.0):
    """Random screen positions, some off the target by up to ``-margin`` pixels, at the depths of deep_camera,
    moving up to ~100 px/s on the screen."""
    return screen_particles(rng, n, WIDTH, HEIGHT, margin, depths=(0.0, 4.0, 12.0), speed=60.0, flat=True)


def draw(host, camera, pos_age, vel_life, values=(), rasterized=False, scene_depth=None, check_every=1, walk=None):
    """(compositor, layer, effect) after adding one effect of these particles (``rasterized``: by the peer;
    ``walk``: the quads' tile_lists.WALKS, else the product's)."""
    s = effect_settings({"count": len(pos_age), **SETTINGS, **dict(values)})
    system = ParticleSystem(host, s)
    system.write_state(pos_age, vel_life)
    compositor = Compositor(FrameResources(host, camera.width, camera.height), render_settings({"emax": 64.0}))
    compositor.check_every = check_every
    if scene_depth is not None:
        depth = SceneDepth(host, camera.width, camera.height)
        depth.depth = host.texture("scene_depth", camera.width, camera.height, "DEPTH32F", scene_depth)
        depth.build_coarse()
        compositor.resources.use_depth(depth)
    if rasterized:
        compositor.quads = RasterQuads(host)
    if walk is not None:
        compositor.quads = quad_tiles.QuadLayer(host, camera.width, camera.height, check_every, walk)
    compositor.add(system, camera)
    return compositor, host.read(compositor.resources.raster), system


def reference(host, compositor, scene_depth=None):
    """The reference sum of the quads the compositor's QuadLayer drew last, and its rounding bound."""
    quads = compositor.quads.quads
    shape, streak, axes, color = (host.read(t).reshape(-1, 4) for t in (quads.shapes, quads.streaks, quads.axes,
                                                                         quads.colors))
    height, width = compositor.height, compositor.width
    return ref.accumulate(np.zeros((height, width, 4)), shape, streak[:, :2], axes, color, scene_depth)


def assert_reference(host, compositor, got, scene_depth=None):
    want, bound = reference(host, compositor, scene_depth)
    assert want[..., :3].max() > 0
    rounding = HALF if compositor.resources.raster.format == "RGBA16F" else 2.0**-22
    tolerance = 1e-5 * bound + rounding * np.abs(want[..., :3]).max(axis=-1)
    excess = np.abs(got[..., :3] - want[..., :3]).max(axis=-1) - tolerance
    assert excess.max() <= 0, f"{np.count_nonzero(excess > 0)} pixels beyond the tolerance"
    return want, bound


def assert_like_rasterized(got, rasterized, bound):
    """Per pixel within the raster target's rounding of every add and the corner snapping (1/32 px at the
    least GL allows; a falloff's slope is at most 2 / radius of a radius >= 1 px quad: 1/16 of an add)."""
    difference = np.abs(got - rasterized)[..., :3].max(axis=-1)
    worst = (difference / np.maximum(bound, 1e-30)).max()
    assert (difference <= bound / 16).all(), f"a pixel differs by {worst:.2e} of what its quads can add"
    assert abs(got[..., :3].sum() - rasterized[..., :3].sum()) <= 1e-3 * got[..., :3].sum()
    assert rasterized[..., :3].max() > 0


CASES = {
    "sprites": {},
    "stretched": STRETCHED,
    "motion": {**STRETCHED, "shutter": True},
    "focus": {"focus": True},
    "all": {**STRETCHED, "shutter": True, "focus": True},
}


def camera_of(case) -> Camera:
    camera = deep_camera()
    if case.get("shutter"):
        camera = dataclasses.replace(camera, shutter=Shutter.still(camera.view_proj, -0.1, 0.1))
    if case.get("focus"):
        camera = dataclasses.replace(camera, focus=Focus(6.0, 2.0))
    return camera


@pytest.mark.parametrize("name", list(CASES))
def test_quads_match_the_reference_and_the_rasterized_ones(host, rng, name):
    """Round sprites, stretched ones, over the shutter, out of focus, all together; some across the border."""
    case = CASES[name]
    camera = camera_of(case)
    values = {k: v for k, v in case.items() if k not in ("shutter", "focus")}
    pos_age, vel_life = particles(rng, 300)
    compositor, got, _ = draw(host, camera, pos_age, vel_life, values)
    _, bound = assert_reference(host, compositor, got)
    assert got[0, :, 0].any() and got[:, -1, 0].any(), "quads on the borders"
    _, rasterized, _ = draw(host, camera, pos_age, vel_life, values, rasterized=True)
    assert_like_rasterized(got, rasterized, bound)


def test_still_round_sprites_match_their_reference(host, rng):
    """Still, untextured, round sprites in view: the footprint's own math against reference.raster.round_quads."""
    pos_age, vel_life = particles(rng, 200, margin=4.0)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["velocity"][:] = 0.0
    camera = deep_camera()
    compositor, got, _ = draw(host, camera, pos_age, vel_life)
    s = effect_settings({"count": len(pos_age), **SETTINGS})
    want = ref_raster.round_quads(pos_age, vel_life, camera.view_proj, WIDTH, HEIGHT, s, camera.pixels_per_unit)
    _, bound = reference(host, compositor)
    assert (np.abs(got[..., :3] - want) <= 1e-4 * bound[..., None] + HALF * want).all()


def test_quads_behind_the_scene_are_hidden(host, rng):
    """With the scene's depth, a quad adds only where it is not behind it (LESS_EQUAL, as rasterized)."""
    camera = deep_camera()
    pos_age, vel_life = particles(rng, 300)
    scene = np.ones((HEIGHT, WIDTH), np.float32)
    scene[:, WIDTH // 2:] = 0.5 * (camera.view_proj[2, 2] * 4.0 + camera.view_proj[2, 3]) / 2.0 + 0.5  # w 2's depth
    compositor, got, _ = draw(host, camera, pos_age, vel_life, STRETCHED, scene_depth=scene)
    want, bound = assert_reference(host, compositor, got, scene)
    unhidden, _ = reference(host, compositor)
    assert (want != unhidden).any(), "some quads are hidden"
    _, rasterized, _ = draw(host, camera, pos_age, vel_life, STRETCHED, rasterized=True, scene_depth=scene)
    assert_like_rasterized(got, rasterized, bound)


@pytest.mark.parametrize("name", ["stretched", "all"])
def test_walks_agree_bit_for_bit(host, rng, name):
    """A block that skips the quads passing it by (BLOCKS) adds what every pixel testing every quad (ALL) does:
    those it skips add exactly 0.  Long streaks at every angle, some hidden behind the scene."""
    case = CASES[name]
    camera = camera_of(case)
    values = {k: v for k, v in case.items() if k not in ("shutter", "focus")}
    pos_age, vel_life = particles(rng, 300)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["velocity"][:, :2] *= 4.0
    scene = np.full((HEIGHT, WIDTH), 0.9, np.float32)
    scene[HEIGHT // 2:] = 0.6
    layers = {walk: draw(host, camera, pos_age, vel_life, values, scene_depth=scene, walk=walk)[1] for walk in WALKS}
    assert layers["ALL"][..., :3].max() > 0
    np.testing.assert_array_equal(layers["BLOCKS"], layers["ALL"])


def test_off_screen_behind_and_empty(host):
    """Quads wholly off the frame, behind the camera, past the far plane or dead add nothing and list nothing."""
    pos_age = np.array([[-40.0, 20.0, 0.0, 0.5],  # left of the frame
                        [30.0, 20.0, -8.0, 0.5],  # w = -1: behind the camera
                        [30.0, 20.0, 0.0, 2.0],  # dead: older than its life
                        [30.0, 20.0, np.nan, 0.5]], np.float32)
    vel_life = np.tile(np.array([[1.0, 0.0, 0.0, 1.0]], np.float32), (4, 1))
    compositor, got, system = draw(host, deep_camera(), pos_age, vel_life, STRETCHED)
    assert not got.any()
    assert int(host.read(compositor.quads.kept[system].total)[0, 0]) == 0


def test_lists_grow_at_a_check(host, rng):
    """Lists first sized for ESTIMATED_TILES_PER_PARTICLE: a compositor checking every second draw drops the
    instances past them on the first draw, and matches the reference from the check on."""
    pos_age, vel_life = particles(rng, 600, margin=0.0)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["position"][:, 2] = 0.0
    particle["velocity"][:, :2] = rng.normal(0.0, 1600.0, (600, 2))  # long, wide streaks: many tiles each
    camera = deep_camera()
    compositor, first, system = draw(host, camera, pos_age, vel_life, {**STRETCHED, "size": 12.0}, check_every=2)
    kept = compositor.quads.kept[system]
    assert int(host.read(kept.total)[0, 0]) > max(MIN_INSTANCES, quad_tiles.ESTIMATED_TILES_PER_PARTICLE * 600)
    want, _ = reference(host, compositor)
    assert np.abs(first - want).max() > 0.01 * want.max(), "instances beyond the first lists are dropped"
    compositor.resolve()
    compositor.add(system, camera)
    assert_reference(host, compositor, host.read(compositor.resources.raster))


def test_kernels_registered():
    assert set(quad_tiles.QUAD_KERNELS) <= set(registry.KERNELS)


def test_many_quads_in_one_tile(host, rng):
    """700 quads over one tile's neighbourhood: lists longer than a shared-memory chunk (TILE_CHUNK)."""
    pos_age, vel_life = particles(rng, 700)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["position"][:, 2] = 0.0
    particle["position"][:, :2] = rng.uniform(34.0, 46.0, (700, 2))  # inside tile (2, 2)
    compositor, got, system = draw(host, deep_camera(), pos_age, vel_life, STRETCHED)
    assert_reference(host, compositor, got)
    lists = compositor.quads.kept[system].lists.binning.counts
    assert host.read(lists).max() > 2 * TILE_CHUNK


def test_dense_faint_quads_keep_their_light(host, rng):
    """20,000 faint streaks piled up: the gather sums in float32 and rounds once, as the rasterized quads would
    into a float32 target; rasterized into the half-float target every add rounds (llvmpipe truncates), and
    light goes missing where they pile up (the fountain preset's frames brighten by it)."""
    pos_age, vel_life = particles(rng, 20_000, margin=30.0)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["position"][:, 2] = 0.0
    values = {**STRETCHED, "emission_strength": 0.05}
    compositor, got, system = draw(host, deep_camera(), pos_age, vel_life, values)
    full = host.texture("raster_full", WIDTH, HEIGHT, "RGBA32F")
    host.clear(full)
    raster.draw(host, system, deep_camera(), full, None, compositor.resources.look_texture(system))
    rasterized = host.read(full)
    assert np.abs(got - rasterized)[..., :3].max() <= 2 * HALF * rasterized.max()
    assert got[..., :3].sum() == pytest.approx(rasterized[..., :3].sum(), rel=1e-3)
