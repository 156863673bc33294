"""Additive trails by tiles (addon/engine/draw/trail_tiles.py): GPU vs the numpy reference per pixel.

The trails go through the product's path (``Compositor.add_trails``, render
setting trail_draw SPLAT) and the layer they add into (``compositor.resources.raster``,
half floats) is read back.  Against ``reference.trails.tiled_segments`` of the
reference's segments (``ribbon_segments``, float64 from the state and the
rings): the same coverage and colors, within the layer's half-float rounding
and float32 against float64; pixels whose center lies on a segment's end line
(or at the scene's depth) may go either way.
"""

import dataclasses

import numpy as np
import pytest

from addon.engine import registry
from addon.engine.draw import trail_tiles
from addon.engine.draw.compositing import Camera, Compositor, camera_view, perspective
from addon.engine.draw.depth import SceneDepth
from addon.engine.draw.footprint import Shutter
from addon.engine.draw.frame_resources import FrameResources
from addon.engine.order.tile_lists import MIN_INSTANCES, TILE, TILE_CHUNK, WALKS, TileSlices, slices_within
from addon.engine.reference.order import tile_lists as ref_lists
from addon.engine.reference.simulate import trails as ref
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import effect_settings, render_settings
from addon.engine.simulate.simulation import ParticleSystem
from tests.engine.simulate.test_trails import CAMERA_AIM, CAMERA_AT, DT, STILL, one_trail_scene, rings_of
from tests.gpu_fill import upload

WIDTH, HEIGHT = 96, 64
HALF = 2.0**-10  # half float's ulp, relative: the conversion may truncate (llvmpipe does)
SLICES = 4  # workgroups the slice tests split a long list over: all of them used by lists of a few chunks


def camera_at(width=WIDTH, height=HEIGHT, at=CAMERA_AT, aim=CAMERA_AIM) -> Camera:
    view_proj = perspective(0.8, width / height, 0.1, 10.0) @ camera_view(at, aim)
    return Camera(view_proj, width, height)


def fountain_camera(distance=1.4) -> Camera:
    """Looking at the fountain (fountain()) from ``distance`` in front, level with its middle."""
    return camera_at(at=(0.0, -distance, 0.35), aim=(0.0, 0.0, 0.35))


def fountain(host, frames=6, **overrides) -> ParticleSystem:
    """Particles born over ``frames`` frames, rising with turbulence: young ones with a few ring points."""
    values = dict(count=200, lifetime=0.5, lifetime_random=0.5, velocity=(0.0, 0.0, 2.0), velocity_random=1.0,
                  turbulence_strength=4.0, trail_points=6, size=0.015, trail_width_end=0.4, trail_fade=0.5,
                  trail_color_end=(0.2, 0.5, 1.0), color_random=0.3, size_random=0.5, seed=11)
    system = ParticleSystem(host, effect_settings({**values, **overrides}))
    for _ in range(frames):
        system.step(DT, STILL, STILL)
    return system


def draw(host, system, camera, scene_depth=None, check_every=1, walk=trail_tiles.TRAIL_WALK,
         slices=trail_tiles.TRAIL_SLICES):
    """(compositor, layer) after adding ``system``'s trails by tiles, walked by ``walk`` (tile_lists.WALKS), a long
    list split over ``slices`` workgroups."""
    compositor = Compositor(FrameResources(host, camera.width, camera.height), render_settings({"emax": 16.0}))
    compositor.check_every = check_every
    compositor.trails = trail_tiles.TrailLayer(host, camera.width, camera.height, check_every, walk, slices)
    if scene_depth is not None:
        compositor.resources.use_depth(scene_depth_of(host, scene_depth))
    compositor.add_trails(system, camera)
    return compositor, host.read(compositor.resources.raster)


def scene_depth_of(host, window_depths) -> SceneDepth:
    """A scene depth holding these (height, width) window depths, its coarse range built."""
    height, width = window_depths.shape
    depth = SceneDepth(host, width, height)
    depth.depth = host.texture("scene_depth", width, height, "DEPTH32F", window_depths)
    depth.build_coarse()
    return depth


def reference(system, camera, scene_depth=None, head_at_close=False):
    pos_age, vel_life = system.read_state()
    if head_at_close:  # the head where the splat's streak ends (Shutter.still: the same camera at close)
        pos_age = pos_age.copy()
        particle = PARTICLE.read_images(pos_age, vel_life)
        particle["position"][:] += particle["velocity"] * camera.shutter.close
    segments = ref.ribbon_segments(system.settings, rings_of(system), pos_age, vel_life, camera.view_proj,
                                   camera.width, camera.height, camera.pixels_per_unit)
    return ref.tiled_segments(segments, camera.width, camera.height, scene_depth)


def assert_reference(got, want, edge, end_lines=0.05):
    """``got`` within the tolerance of ``want`` but on ``edge``, which holds under ``end_lines`` of the pixels
    covered."""
    assert want.max() > 0
    tolerance = HALF * np.abs(want).max(axis=-1) + 1e-5 * want.max()
    excess = np.abs(got[..., :3] - want).max(axis=-1) - tolerance
    excess[edge] = 0.0
    assert excess.max() <= 0, f"{np.count_nonzero(excess > 0)} pixels beyond the tolerance, worst {excess.max():.3g}"
    assert np.count_nonzero(edge) < end_lines * np.count_nonzero(want.any(axis=-1)), "few pixels on an end line"


@pytest.mark.parametrize("walk", WALKS)
def test_trails_match_the_reference(host, walk):
    """Trails of particles of every age (rings not yet full) over and across the target's borders; either walk
    (the same sums, in the same order)."""
    system = fountain(host)
    camera = fountain_camera()
    compositor, got = draw(host, system, camera, walk=walk)
    want, edge = reference(system, camera)
    assert_reference(got, want, edge)
    assert np.count_nonzero(want.any(axis=-1)) > 300, "trails over a good part of the target"
    heads = host.read(system.trails.heads).reshape(-1, 4)[: system.count, 1]
    assert (heads == 0).any() and ((heads > 0) & (heads < 6)).any() and (heads == 6).any(), "every age"
    assert got[..., 3].max() == 0, "additive: coverage (alpha) unchanged"
    other = next(w for w in WALKS if w != walk)
    np.testing.assert_array_equal(draw(host, system, camera, walk=other)[1], got)


def test_young_particles_list_only_their_filled_segments(host):
    """A segment past the ring's filled points gets no tiles: a young particle lists only what it has."""
    system = fountain(host, frames=3)
    compositor, _ = draw(host, system, fountain_camera())
    points = system.settings.trail_points
    counts = host.read(compositor.trails.segments.instance_counts).reshape(-1)[: system.count * points]
    filled = host.read(system.trails.heads).reshape(-1, 4)[: system.count, 1].astype(int)
    unfilled = np.arange(points)[None, :] >= filled[:, None]
    assert unfilled.any() and (counts.reshape(-1, points)[~unfilled] > 0).any()
    assert not counts.reshape(-1, points)[unfilled].any()


def test_with_motion_blur_the_head_is_at_shutter_close(host):
    """Under a shutter the first segment starts where the particle is at shutter close."""
    system = fountain(host)
    still = fountain_camera()
    camera = dataclasses.replace(still, shutter=Shutter.still(still.view_proj, -0.1, 0.1))
    _, got = draw(host, system, camera)
    want, edge = reference(system, camera, head_at_close=True)
    assert_reference(got, want, edge)
    assert np.abs(want - reference(system, still)[0]).max() > 0.1 * want.max(), "the shutter moves the heads"


def test_trails_behind_the_scene_are_hidden(host):
    """With the scene's depth a segment adds only where its depth (interpolated along it) is not behind it."""
    system = fountain(host)
    camera = fountain_camera()
    _, unhidden = draw(host, system, camera)
    scene = np.ones((HEIGHT, WIDTH), np.float32)
    scene[:, WIDTH // 2:] = window_depth(camera, (0.0, 0.0, 0.35))  # a wall through the emitter, right half
    _, got = draw(host, system, camera, scene_depth=scene)
    want, edge = reference(system, camera, scene)
    assert_reference(got, want, edge)
    right = (slice(None), slice(WIDTH // 2, None))
    assert got[right][..., :3].sum() < 0.9 * unhidden[right][..., :3].sum(), "the wall hides some segments"
    assert got[right][..., :3].sum() > 0.0, "and not all"


def window_depth(camera, point) -> float:
    """The window depth of a world point."""
    clip = camera.view_proj @ np.array([*point, 1.0])
    return float(clip[2] / clip[3] * 0.5 + 0.5)


def test_off_screen_behind_and_flat_segments_get_no_tiles(host):
    """Segments off the target, with an end behind the camera or past the far plane, or of zero length on the
    screen list nothing and add nothing."""
    path = ((-9.0, 0.0, 0.1), (-9.5, 0.0, 0.1),  # far left of the view
            (0.0, -4.0, 0.1),  # behind the camera (y -3): that segment and the next
            (0.0, -3.5, 0.1))
    system, camera, _ = one_trail_scene(host, path)
    system.write_state(np.array([[-9.0, 0.0, 0.1, 0.5]], np.float32), np.array([[0.0, 0.0, 0.0, 1.0]], np.float32))
    compositor, got = draw(host, system, camera)
    assert not got.any()
    assert int(host.read(compositor.trails.kept[system].total)[0, 0]) == 0
    far = ((0.0, 20.0, 0.1), (0.1, 0.0, 0.1), (0.2, 0.0, 0.1), (0.2, 0.0, 0.1))  # past the far plane, then flat
    system, camera, _ = one_trail_scene(host, far)
    system.write_state(np.array([[0.0, 20.0, 0.1, 0.5]], np.float32), np.array([[0.0, 0.0, 0.0, 1.0]], np.float32))
    compositor, got = draw(host, system, camera)
    counts = host.read(compositor.trails.segments.instance_counts).reshape(-1)[:4]
    assert counts[0] == 0 and counts[1] == 0 and counts[2] > 0 and counts[3] == 0, counts
    want, edge = reference(system, camera)
    assert_reference(got, want, edge)


def test_lists_grow_at_a_check(host):
    """Lists first sized for ESTIMATED_TILES_PER_SEGMENT: wide trails near the camera need more; a compositor
    checking every second draw drops the instances past them on the first draw, and from the check on adds what
    one checking every draw does.  (The reference is not the measure here: a band tens of pixels wide around a
    segment a fraction of a pixel long tilts with the last bits of its ends.)"""
    system = fountain(host, size=0.6)
    camera = fountain_camera(0.7)
    compositor, first = draw(host, system, camera, check_every=2)
    _, exact = draw(host, system, camera)
    kept = compositor.trails.kept[system]
    segments = system.count * system.settings.trail_points
    assert int(host.read(kept.total)[0, 0]) > max(MIN_INSTANCES, trail_tiles.ESTIMATED_TILES_PER_SEGMENT * segments)
    assert np.abs(first - exact).max() > 0.01 * exact.max(), "instances beyond the first lists are dropped"
    compositor.resolve()
    compositor.add_trails(system, camera)
    np.testing.assert_array_equal(host.read(compositor.resources.raster), exact)
    assert host.read(kept.lists.binning.counts).max() > TILE_CHUNK, "a tile's list longer than a chunk"


def test_a_sweep_past_the_lens_is_left_out(host):
    """A segment whose box holds more than MAX_SEGMENT_PIXELS pixels adds nothing (as the reference)."""
    path = ((-0.2, -2.7, 0.1), (-0.3, 0.0, 0.1), (-0.6, 0.0, 0.2), (-0.9, 0.0, 0.2))  # from 0.3 to 3 deep
    system, _, _ = one_trail_scene(host, path, size=0.05)
    system.write_state(np.array([[0.2, -2.7, 0.1, 0.5]], np.float32), np.array([[0.0, 0.0, 0.0, 1.0]], np.float32))
    camera = camera_at(400, 300)
    compositor, got = draw(host, system, camera)
    counts = host.read(compositor.trails.segments.instance_counts).reshape(-1)[:4]
    assert counts[0] == 0 and counts[2] > 0, counts
    want, edge = reference(system, camera)
    assert_reference(got, want, edge)


def test_batches_add_up_to_the_whole(host, monkeypatch):
    """An effect with more segments than a batch is drawn in batches of them, in order: the same layer but for
    its half-float rounding, once a batch."""
    system = fountain(host)
    camera = fountain_camera()
    _, whole = draw(host, system, camera)
    monkeypatch.setattr(trail_tiles, "MAX_BATCH_SEGMENTS", 500)  # 1,200 segments: batches of 500, 500 and 200
    compositor, batched = draw(host, system, camera)
    assert compositor.trails.segments.capacity == 500
    assert (np.abs(batched - whole) <= 3 * HALF * np.abs(whole)).all()
    assert (batched != whole).mean() < 0.01


@pytest.mark.parametrize("walk", WALKS)
def test_long_lists_are_split_over_slices(host, walk):
    """A dense fountain: lists of many chunks, each summed by SLICES workgroups into partial sums added in slice
    order, match the reference and one workgroup a tile but for float32 grouping; a tile of up to a chunk gets
    the same bits (its one partial sum added to an empty layer)."""
    system = fountain(host, count=3000, velocity_random=0.3, turbulence_strength=1.0)
    camera = fountain_camera()
    compositor, got = draw(host, system, camera, walk=walk, slices=SLICES)
    counts = host.read(compositor.trails.kept[system].lists.binning.counts).reshape(-1)
    counts = counts[: compositor.trails.kept[system].tiles_x * compositor.trails.kept[system].tiles_y]
    assert counts.max() > 2 * SLICES * TILE_CHUNK, "every slice sums runs of several chunks"
    assert ((counts > 0) & (counts <= TILE_CHUNK)).any(), "and tiles of one chunk"
    want, edge = reference(system, camera)
    assert_reference(got, want, edge, end_lines=0.2)  # thousands of segments end in the emitter's tile
    _, whole = draw(host, system, camera, walk=walk, slices=1)
    assert (np.abs(got - whole) <= 3 * HALF * np.abs(whole)).all()
    short = np.repeat(np.repeat((counts <= TILE_CHUNK).reshape(-1, WIDTH // TILE), TILE, 0), TILE, 1)
    np.testing.assert_array_equal(got[short], whole[short])


def test_slices_take_runs_of_whole_chunks():
    """Every slice that has entries sums a run of whole chunks, in list order, up to SLICES of them: lists at and
    around chunk boundaries."""
    for n, used in ((0, 0), (1, 1), (TILE_CHUNK, 1), (TILE_CHUNK + 1, 2), (2 * TILE_CHUNK, 2),
                    (SLICES * TILE_CHUNK, SLICES), (SLICES * TILE_CHUNK + 1, 3), (3 * SLICES * TILE_CHUNK, SLICES)):
        runs = ref_lists.slice_runs(n, SLICES)
        assert len(runs) == used, (n, runs)
        assert [i for first, end in runs for i in range(first, end)] == list(range(n)), "the list, in order"
        assert all(first % TILE_CHUNK == 0 for first, _ in runs)


def test_combine_sums_partials_in_slice_order(host, rng):
    """tile_combine: a tile with a list gets its used slices' partial sums added to what it holds in float32 and
    slice order (magnitudes whose sum depends on the order), its alpha kept; slices past the used ones (huge values here) and
    tiles without a list are left alone; edge tiles overhang the layer."""
    width, height, tiles_x, tiles_y = 4 * TILE - 5, 2 * TILE - 3, 4, 2
    counts = np.array([0, 1, TILE_CHUNK, TILE_CHUNK + 1, 2 * TILE_CHUNK, SLICES * TILE_CHUNK + 1,
                       3 * SLICES * TILE_CHUNK, 5 * TILE_CHUNK - 1], np.uint32)
    shape = (tiles_x * tiles_y, SLICES, TILE, TILE, 4)
    partials = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 8, shape)).astype(np.float32)
    for tile, n in enumerate(counts):
        partials[tile, len(ref_lists.slice_runs(int(n), SLICES)):] = 1e30
    layer = rng.random((height, width, 4)).astype(np.float32)
    slices = TileSlices(host, tiles_x, tiles_y, SLICES)
    per_row = slices.partials.width // TILE
    blocks = partials.reshape(-1, TILE, TILE, 4)
    rows = -(-len(blocks) // per_row)
    image = np.zeros((rows * per_row, TILE, TILE, 4), np.float32)
    image[: len(blocks)] = blocks
    image = image.reshape(rows, per_row, TILE, TILE, 4).transpose(0, 2, 1, 3, 4).reshape(rows * TILE, -1, 4)
    slices.partials = host.texture("tile_partials", image.shape[1], image.shape[0], "RGBA32F", image)
    target = host.texture("layer", width, height, "RGBA32F", layer)
    slices.combine(upload(host, "tile_counts", counts), target, (width, height))
    want = ref_lists.combine(layer, partials, counts, SLICES)
    assert not np.array_equal(want, layer)
    np.testing.assert_array_equal(host.read(target), want)


def test_slices_fit_the_partial_sums_memory(host):
    """32 slices at 1080p, fewer on larger targets (their partial sums within tile_lists.PARTIALS_MEMORY), at
    least 1 (no split); partial sums past a texture (twice the blocks a square texture holds, on any GPU) are
    refused with a clear message."""
    assert slices_within(host, 120 * 68, 32) == 32
    assert slices_within(host, 240 * 135, 32) == 8
    assert slices_within(host, 480 * 270, 32) == 2
    assert slices_within(host, 1000 * 1000, 32) == 1
    side = host.max_texture_size // TILE
    with pytest.raises(ValueError, match="fewer slices"):
        TileSlices(host, side, side, 2)


def test_kernels_registered():
    assert set(trail_tiles.TRAIL_TILE_KERNELS) <= set(registry.KERNELS)
