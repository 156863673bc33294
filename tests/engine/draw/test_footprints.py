"""Footprints (anti-aliased 2x2, motion-blur streak, depth-of-field disc): GPU vs numpy reference, exactly.

Targets are powers of two wide and high so that the pixel-grid camera's
products are exact; the footprint splat is diffed word for word against
``reference/draw/footprint.py``, energy is checked against the one-pixel splat.
"""

import dataclasses

import numpy as np
import pytest

from addon.engine import pipeline, registry
from addon.engine.draw import compositing, footprint, raster
from addon.engine.draw.bokeh import BokehLayer
from addon.engine.draw.compositing import Camera, Compositor
from addon.engine.draw.footprint import Focus, Shutter
from addon.engine.draw.frame_resources import FrameResources
from addon.engine.draw.sprites import SpriteLayer
from addon.engine.reference.draw import compositing as ref
from addon.engine.reference.draw import footprint as ref_footprint
from addon.engine.reference.draw import raster as ref_raster
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import effect_settings, render_settings
from addon.engine.simulate.simulation import ParticleSystem

WIDTH, HEIGHT = 128, 64


def shifted(camera: Camera, dx: float, dy: float = 0.0) -> np.ndarray:
    """The camera's matrix with the image moved by (dx, dy) pixels."""
    view_proj = camera.view_proj.copy()
    view_proj[0, 3] += 2.0 * dx / camera.width
    view_proj[1, 3] += 2.0 * dy / camera.height
    return view_proj


def deep_camera() -> Camera:
    """The pixel grid with clip w = 1 + z / 4: depth varies, so do circles of confusion.

    ``particles`` puts z at 0, 4, 12 or 28: w is 1, 2, 4 or 8, and dividing by a
    power of two is exact on every host (div_rn is not on llvmpipe, whose fma
    does not fuse), so the reference matches bit for bit."""
    camera = Camera.pixel_grid(WIDTH, HEIGHT)
    view_proj = camera.view_proj.copy()
    view_proj[3] = [0.0, 0.0, 0.25, 1.0]
    return Camera(view_proj, WIDTH, HEIGHT)


def particles(rng, n, margin=-4.0):
    """Random sub-pixel positions (some off the target by up to ``-margin``), depths (see deep_camera), ages, velocities."""
    pos_age, vel_life = np.empty((n, 4), np.float32), np.empty((n, 4), np.float32)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["position"][:, 0] = rng.uniform(margin, WIDTH - margin, n)
    particle["position"][:, 1] = rng.uniform(margin, HEIGHT - margin, n)
    particle["position"][:, 2] = rng.choice(np.array([0.0, 4.0, 12.0, 28.0], np.float32), n)
    particle["age"][:] = rng.random(n, dtype=np.float32) * 0.99
    particle["velocity"][:] = rng.normal(0.0, 20.0, (n, 3))  # pixels a second
    particle["life"][:] = 1.0
    return pos_age, vel_life


SETTINGS = {"size": 10.0, "color_start": (3.0, 0.2, 1.0), "color_end": (0.1, 2.5, 0.01), "emission_strength": 1.3}


def run(host, camera, pos_age, vel_life, emax=64.0, antialias=True, paired=True, depth=None):
    s = effect_settings({"count": len(pos_age), **SETTINGS})
    system = ParticleSystem(host, s)
    system.write_state(pos_age, vel_life)
    compositor = Compositor(FrameResources(host, camera.width, camera.height), render_settings({"emax": emax}), paired=paired)
    compositor.antialias = antialias
    if depth is not None:
        compositor.resources.use_depth(depth)
    compositor.splat(system, camera)
    hi, lo = compositor.read_accum()
    overflow = compositor.take_stats().overflow
    compositor.resolve()
    return s, hi, lo, overflow, compositor.read_frame()


def check_exact(host, camera, pos_age, vel_life, emax=64.0, paired=True, scene_depth=None):
    depth = None
    if scene_depth is not None:
        from addon.engine.draw.depth import SceneDepth

        depth = SceneDepth(host, camera.width, camera.height)
        depth.depth = host.texture("scene_depth", camera.width, camera.height, "DEPTH32F", scene_depth)
        depth.build_coarse()
    s, hi, lo, overflow, frame = run(host, camera, pos_age, vel_life, emax, paired=paired, depth=depth)
    ref_hi, ref_lo, ref_overflow = ref_footprint.footprint_splat(
        pos_age, vel_life, camera.view_proj, camera.width, camera.height, s, emax, camera.pixels_per_unit,
        shutter=camera.shutter, focus=camera.focus, scene_depth=scene_depth)
    np.testing.assert_array_equal(hi, ref_hi)
    np.testing.assert_array_equal(lo, ref_lo)
    assert overflow == ref_overflow
    return s, ref_hi, ref_lo, frame


@pytest.mark.parametrize("paired", [False, True])
def test_antialiased_exact(host, rng, paired):
    camera = Camera.pixel_grid(WIDTH, HEIGHT)
    pos_age, vel_life = particles(rng, 30_001)
    _, ref_hi, ref_lo, frame = check_exact(host, camera, pos_age, vel_life, paired=paired)
    np.testing.assert_array_equal(frame, ref.resolve(ref_hi, ref_lo, 64.0))
    assert np.count_nonzero(ref_hi) > 0.99 * WIDTH * HEIGHT


def test_antialiased_carry_and_overflow(host, rng):
    """Thousands of particles on one corner of four pixels: G carries and channels overflow, counted as the reference does."""
    camera = Camera.pixel_grid(WIDTH, HEIGHT)
    pos_age, vel_life = particles(rng, 9000)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["position"][:, :2] = (40.25, 20.75)
    _, ref_hi, _, _ = check_exact(host, camera, pos_age, vel_life, emax=1e-2)
    assert np.count_nonzero(ref_hi) == 4


def test_antialiased_energy_is_the_one_pixel_splat_exactly(host, rng):
    """Away from the borders, every pixel's share adds up to the one-pixel splat's integer color."""
    camera = Camera.pixel_grid(WIDTH, HEIGHT)
    pos_age, vel_life = particles(rng, 20_000, margin=2.0)
    s, hi, lo, overflow, _ = run(host, camera, pos_age, vel_life, emax=64.0)
    _, one_hi, one_lo, one_overflow, _ = run(host, camera, pos_age, vel_life, emax=64.0, antialias=False)
    assert overflow == one_overflow == 0
    np.testing.assert_array_equal(integer_totals(hi, lo), integer_totals(one_hi, one_lo))


def integer_totals(hi, lo):
    """The accumulation's R, G, B summed over the target, as integers."""
    hi, lo = hi.astype(np.int64), lo.astype(np.int64)
    return np.array([(hi & 0x1FFFFF).sum(), (((hi >> 21) << 11) | (lo >> 21)).sum(), (lo & 0x1FFFFF).sum()])


def test_bilinear_weights_of_one_particle(host):
    """A particle at (10.75, 5.0): 3/4 of it in column 10 and 1/4 in column 11 (pixel centres at .5), rows 4 and 5 alike."""
    camera = Camera.pixel_grid(WIDTH, HEIGHT)
    pos_age = np.array([[10.75, 5.0, 0.0, 0.5]], np.float32)
    vel_life = np.array([[0.0, 0.0, 0.0, 1.0]], np.float32)
    red = run(host, camera, pos_age, vel_life)[-1][..., 0]
    assert np.count_nonzero(red) == 4
    quantum = 64.0 / (1 << 21)  # rounding leftovers land in the last tap
    np.testing.assert_allclose(red[4, 10:12], red[5, 10:12], atol=2 * quantum)
    np.testing.assert_allclose(red[5, 10], 3.0 * red[5, 11], atol=8 * quantum)


def motion_camera(camera: Camera, pan_px=3.0) -> Camera:
    """Shutter from 1/8 s before the frame to 1/8 s after it, the camera panning ``pan_px`` pixels meanwhile."""
    shutter = Shutter(-0.125, 0.125, shifted(camera, 0.0), shifted(camera, pan_px, -pan_px / 2))
    return dataclasses.replace(camera, shutter=shutter)


def test_motion_blur_exact(host, rng):
    camera = motion_camera(Camera.pixel_grid(WIDTH, HEIGHT))
    pos_age, vel_life = particles(rng, 20_000)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["velocity"][:7] = 2000.0  # past MAX_SAMPLES pixels of streak
    particle["velocity"][7] = np.inf  # not finite: no streak
    check_exact(host, camera, pos_age, vel_life)


def test_depth_of_field_exact(host, rng):
    camera = dataclasses.replace(deep_camera(), focus=Focus(5.0, 1.0))  # radii 0, 2.5, 3.75 and 4.375 px
    pos_age, vel_life = particles(rng, 20_000)
    particle = PARTICLE.read_images(pos_age, vel_life)
    check_exact(host, camera, pos_age, vel_life)
    radii = camera.focus.radius_px(1.0 + particle["position"][:, 2] / 4)
    assert (radii > footprint.SPLAT_MAX_RADIUS).any() and (radii < 0.5).any(), "levels and sprites"


def test_motion_blur_with_depth_of_field_and_scene_depth_exact(host, rng):
    camera = dataclasses.replace(motion_camera(deep_camera()), focus=Focus(6.0, 1.5))  # radii 3, 1.5, 3.75, 4.875
    pos_age, vel_life = particles(rng, 20_000)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["velocity"][:, 2] = 0.0  # w stays a power of two at shutter open and close (see deep_camera)
    scene_depth = rng.uniform(0.4, 0.7, (HEIGHT, WIDTH)).astype(np.float32)
    scene_depth[:16, :16] = 0.1
    check_exact(host, camera, pos_age, vel_life, scene_depth=scene_depth)


def frame_energy(frame):
    return frame[..., :3].astype(np.float64).sum()


@pytest.mark.parametrize("what", ["motion", "focus"])
def test_blur_keeps_the_frames_energy(host, rng, what):
    """Blur on: the frame's total within 2% of blur off (streaks and discs, splatted or sprites, stay on the target)."""
    camera = deep_camera()
    pos_age, vel_life = particles(rng, 5000, margin=24.0)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["velocity"][:, 2] *= 0.05  # fast in depth, the deep camera's streaks would leave the target
    if what == "motion":
        blurred = motion_camera(camera, pan_px=2.0)
    else:
        blurred = dataclasses.replace(camera, focus=Focus(20.0, 1.25))
        assert (blurred.focus.radius_px(1.0 + particle["position"][:, 2] / 4) > footprint.SPLAT_MAX_RADIUS).mean() > 0.2
    off = frame_energy(run(host, camera, pos_age, vel_life, emax=1024.0)[-1])
    on = frame_energy(run(host, blurred, pos_age, vel_life, emax=1024.0)[-1])
    assert on == pytest.approx(off, rel=0.02)


def test_off_is_todays_splat(host, rng):
    """No antialiasing, shutter or focus: the one-pixel kernel itself, frames equal to the one-pixel reference."""
    camera = Camera.pixel_grid(WIDTH, HEIGHT)
    pos_age, vel_life = particles(rng, 10_000, margin=0.0)
    s, hi, lo, _, frame = run(host, camera, pos_age, vel_life, antialias=False)
    ref_hi, ref_lo, _ = ref.splat(pos_age, vel_life, camera.view_proj, WIDTH, HEIGHT, s, 64.0, camera.pixels_per_unit)
    np.testing.assert_array_equal(frame, ref.resolve(ref_hi, ref_lo, 64.0))
    compositor = Compositor(FrameResources(host, WIDTH, HEIGHT), render_settings({"emax": 8.0}))
    assert not compositor.uses_footprint(camera)
    assert raster.QUADS.for_effect(s, camera=camera, textured=False) is raster.QUADS


def test_thin_lens_circle_of_confusion():
    """50 mm at f/2 focused at 2 m, 36 mm of sensor over 1920 px: radius f^2 |z - d| / (2 N z (d - f)) in sensor px."""
    focus = Focus.thin_lens(50.0, 2.0, 2.0, 1920 / 36.0)
    expected = 0.05 * 0.05 * 2.0 / (2 * 2.0 * 4.0 * 1.95) / 0.036 * 1920
    assert focus.radius_px(4.0) == pytest.approx(expected)
    assert focus.radius_px(2.0) == 0.0
    in_centimetres = Focus.thin_lens(50.0, 2.0, 200.0, 1920 / 36.0, unit_scale=0.01)
    assert in_centimetres.radius_px(400.0) == pytest.approx(expected)


@pytest.mark.parametrize("particle_type, blend_mode", [("SPRITE", "ADD"), ("STRETCHED", "ADD"), ("SPRITE", "ALPHA")])
def test_sprites_stretch_over_the_shutter(host, particle_type, blend_mode):
    """One sprite moving right at 80 px/s, shutter 1/4 s: 20 px longer, its additive energy about kept."""
    camera = Camera.pixel_grid(WIDTH, HEIGHT)
    blurred = dataclasses.replace(camera, shutter=Shutter.still(camera.view_proj, -0.125, 0.125))
    s = effect_settings({"count": 1, "size": 4.0, "particle_type": particle_type, "blend_mode": blend_mode,
                         "stretch": 0.0})
    system = ParticleSystem(host, s)
    system.write_state(np.array([[64.0, 32.0, 0.0, 0.5]], np.float32), np.array([[80.0, 0.0, 0.0, 1.0]], np.float32))
    frames = []
    for cam in (camera, blurred):
        compositor = Compositor(FrameResources(host, WIDTH, HEIGHT), render_settings({"emax": 8.0}))
        pipeline.composite_into([system], compositor, cam, SpriteLayer(host, WIDTH, HEIGHT), [None])
        frames.append(compositor.read_frame())
    still, moving = ((f.max(axis=-1) > 1e-3).any(axis=0).sum() for f in frames)  # light or coverage
    assert moving >= still + 18
    if blend_mode == "ADD":
        assert frame_energy(frames[1]) == pytest.approx(frame_energy(frames[0]), rel=0.1)


def quad_frame(host, camera, pos_age, velocity=(0.0, 0.0, 0.0), **values):
    """The resolved frame of additive round sprites (raster_quads) at ``pos_age`` moving at ``velocity`` (one for
    all, or one each; a Stretched effect's ``stretch`` sweeps them), and the reference's."""
    s = effect_settings({"count": len(pos_age), **SETTINGS, "particle_type": "SPRITE", **values})
    system = ParticleSystem(host, s)
    vel_life = np.ones((len(pos_age), 4), np.float32)
    PARTICLE.read_image("vel_life", vel_life)["velocity"][:] = velocity
    system.write_state(pos_age, vel_life)
    compositor = Compositor(FrameResources(host, camera.width, camera.height), render_settings({"emax": 64.0}))
    compositor.add(system, camera)
    compositor.resolve()
    stretch = s.stretch if s.particle_type == "STRETCHED" else 0.0
    expected = ref_raster.round_quads(pos_age, vel_life, camera.view_proj, camera.width, camera.height, s,
                                      camera.pixels_per_unit, camera.focus, stretch_seconds=stretch)
    return compositor.read_frame()[..., :3], expected


@pytest.mark.parametrize("velocity", [(80.0, 0.0, 0.0), (48.0, -36.0, 0.0), (2.0, 0.0, 0.0)],
                         ids=["along x", "diagonal", "under a pixel"])
def test_stretched_quads_sweep_the_round_sprite_along_their_path(host, velocity):
    """A Stretched sprite (6 px at w = 4) is the round sprite averaged over where it was in the last
    `stretch` seconds: GPU vs reference, the round sprite's light kept, as long as the path plus its width."""
    pos_age = np.array([[64.25, 32.5, 12.0, 0.5]], np.float32)  # w = 4
    values = {"size": 24.0, "size_random": 0.0, "particle_type": "STRETCHED", "stretch": 0.25}
    frame, expected = quad_frame(host, deep_camera(), pos_age, velocity, **values)
    np.testing.assert_allclose(frame, expected, rtol=2e-3, atol=2e-4 * expected.max())
    still, _ = quad_frame(host, deep_camera(), pos_age, **values)
    assert frame_energy(frame) == pytest.approx(frame_energy(still), rel=0.01)
    lit = np.argwhere(frame.max(axis=-1) > 0)
    reach = float(np.hypot(*velocity[:2])) * 0.25 / 4.0 + 2.0 * np.hypot(6.0, 1.0)  # path (w = 4) plus the disc
    assert np.ptp(lit @ np.array(velocity[1::-1]) / np.hypot(*velocity[:2])) <= reach + 1.0


@pytest.mark.parametrize("kind", ["SPRITE", "STRETCHED"])
def test_quads_colored_by_speed_are_the_start_color_still_and_the_end_color_at_color_speed(host, kind):
    """Additive sprites and stretched quads with Color by Speed (60): one still, one at 30, one at 90, at w = 4
    (pixels 24, 64 and 104 of row 32); GPU vs reference, and each one's color at its center."""
    pos_age = np.array([[-95.75, 32.5, 12.0, 0.5], [64.25, 32.5, 12.0, 0.5], [224.25, 32.5, 12.0, 0.5]], np.float32)
    velocity = np.array([[0.0, 0.0, 0.0], [30.0, 0.0, 0.0], [0.0, -90.0, 0.0]], np.float32)
    values = {"size": 12.0, "size_random": 0.0, "particle_type": kind, "stretch": 0.1, "color_by": "SPEED",
              "color_speed": 60.0}
    frame, expected = quad_frame(host, deep_camera(), pos_age, velocity, **values)
    np.testing.assert_allclose(frame, expected, rtol=2e-3, atol=2e-4 * expected.max())
    start, end = np.array(SETTINGS["color_start"]), np.array(SETTINGS["color_end"])
    for pixel, color in ((24, start), (64, 0.5 * (start + end)), (104, end)):
        np.testing.assert_allclose(frame[32, pixel] / frame[32, pixel].sum(), color / color.sum(), rtol=1e-2)


@pytest.mark.parametrize("focus", [None, Focus(20.0, 4.0), Focus(20.0, 1.0), Focus(6.0, 1.0)],
                         ids=["off", "in focus", "far out", "near"])
def test_sprites_widen_by_their_circle_of_confusion(host, focus):
    """An additive sprite (6 px at w = 4, sqrt(6^2 + 1) with the pixel filter) out of focus: its core max(sqrt(r^2 +
    c^2), c + 0.6 r) wide, the filter's tail to 0.71 r + 0.8 + c, dimmer by the area ratio, its light kept; focused
    exactly at it, the sprite itself.  GPU vs reference."""
    camera = dataclasses.replace(deep_camera(), focus=focus)
    pos_age = np.array([[64.25, 32.5, 12.0, 0.5]], np.float32)  # w = 4
    frame, expected = quad_frame(host, camera, pos_age, size=24.0, size_random=0.0)
    np.testing.assert_allclose(frame, expected, rtol=2e-3, atol=2e-4 * expected.max())
    sharp, _ = quad_frame(host, deep_camera(), pos_age, size=24.0, size_random=0.0)
    assert frame_energy(frame) == pytest.approx(frame_energy(sharp), rel=0.01)
    lit = (frame.max(axis=-1) > 0).sum()
    filtered = float(np.hypot(6.0, 1.0))
    coc = 0.0 if focus is None else focus.radius_px(4.0)
    core = filtered if focus is None else max(float(np.hypot(filtered, coc)), coc + 0.6 * filtered)
    radius = max(core, ref_raster.FILTER_TAIL_SCALE * 6.0 + ref_raster.FILTER_TAIL_PX + coc)
    assert abs(lit - np.pi * radius**2) < 0.1 * np.pi * radius**2
    if focus is not None and focus.distance == 4.0:
        np.testing.assert_allclose(frame, sharp, rtol=1e-3, atol=1e-6)
    if focus is not None and coc > filtered:  # the lens's disc shows: flat out to c - 0.8 r, but for the tail
        y, x = np.mgrid[0:frame.shape[0], 0:frame.shape[1]] + 0.5
        top = np.hypot(x - 64.25, y - 32.5) < coc - 0.8 * filtered - 1.0
        assert top.sum() > 50 and np.ptp(frame[top][:, 0]) <= ref_raster.FILTER_TAIL_LIGHT * frame[top][:, 0].max()


def test_moving_quads_out_of_focus_keep_their_light(host):
    """A Stretched sprite far out of focus: swept flat-topped falloff, GPU vs reference, the still sprite's light."""
    camera = dataclasses.replace(deep_camera(), focus=Focus(20.0, 1.0))
    pos_age = np.array([[64.25, 32.5, 12.0, 0.5]], np.float32)
    values = {"size": 24.0, "size_random": 0.0, "particle_type": "STRETCHED", "stretch": 0.25}
    frame, expected = quad_frame(host, camera, pos_age, (60.0, 20.0, 0.0), **values)
    np.testing.assert_allclose(frame, expected, rtol=2e-3, atol=2e-4 * expected.max())
    still, _ = quad_frame(host, deep_camera(), pos_age, **values)
    assert frame_energy(frame) == pytest.approx(frame_energy(still), rel=0.01)


def test_sprites_blur_only_with_a_focus():
    camera, s = Camera.pixel_grid(WIDTH, HEIGHT), effect_settings({})
    assert raster.QUADS.for_effect(s, camera=camera, textured=False) is raster.QUADS
    blurred = raster.QUADS.for_effect(s, camera=dataclasses.replace(camera, focus=Focus(2.0, 1.0)), textured=False)
    assert ("DEPTH_OF_FIELD", "1") in blurred.defines and blurred in registry.KERNELS
    textured = raster.QUADS.for_effect(s, camera=dataclasses.replace(camera, focus=Focus(2.0, 1.0)), textured=True)
    assert textured.chosen == ("textured", "focus") and textured in registry.KERNELS, "a textured sprite blurs too"


def test_bokeh_sprites_spread_wide_circles(host):
    """A particle far out of focus is a disc of its circle's radius, drawn as a sprite, energy kept."""
    camera = dataclasses.replace(deep_camera(), focus=Focus(20.0, 1.0))
    pos_age = np.array([[64.0, 32.0, 4.0, 0.5]], np.float32)  # w = 2: radius 10 px
    vel_life = np.array([[0.0, 0.0, 0.0, 1.0]], np.float32)
    s, hi, lo, _, frame = run(host, camera, pos_age, vel_life)
    assert not hi.any() and not lo.any(), "not splatted"
    lit = frame[..., 0] > 0
    assert abs(lit.sum() - np.pi * 10.5**2) < 0.1 * np.pi * 10**2
    _, _, _, _, focused = run(host, deep_camera(), pos_age, vel_life)
    assert frame_energy(frame) == pytest.approx(frame_energy(focused), rel=0.02)


def test_footprint_kernels_are_in_the_registry():
    assert set(compositing.FOOTPRINT_VARIANTS) <= set(registry.KERNELS)


def test_widest_circle_bounds_every_kept_particle(rng):
    """widest_px is the largest circle of confusion of anything the kernels keep, for perspective and ortho."""
    view_proj = compositing.perspective(0.8, 1.5, 0.1, 100.0) @ compositing.camera_view((0, -10, 3), (0, 0, 0))
    focus = Focus(30.0, 10.0)
    points = np.c_[rng.uniform(-300.0, 300.0, (400_000, 3)), np.ones(400_000)]
    clip = points @ view_proj.T
    kept = (clip[:, 3] > 0) & (np.abs(clip[:, 2]) <= clip[:, 3])
    widest = focus.widest_px(view_proj)
    assert widest == pytest.approx(focus.radius_px(0.1))  # at the near plane
    assert focus.radius_px(clip[kept, 3]).max() <= widest
    assert Focus(2.0, 0.0).widest_px(Camera.pixel_grid(WIDTH, HEIGHT).view_proj) == pytest.approx(2.0)
    assert Focus(5.0, 1.0).widest_px(deep_camera().view_proj) == pytest.approx(12.5)  # w from 2/7 up


@pytest.mark.parametrize("scale, drawn", [(2.0, False), (20.0, True)])
def test_bokeh_draw_only_when_a_circle_can_be_wide(host, rng, monkeypatch, scale, drawn):
    """The bokeh pass visits every particle, so it is left out when no circle in view passes the splat's radius."""
    calls = []
    monkeypatch.setattr(BokehLayer, "draw", lambda *args: calls.append(args))
    camera = dataclasses.replace(Camera.pixel_grid(WIDTH, HEIGHT), focus=Focus(scale, 0.0))
    run(host, camera, *particles(rng, 100))
    assert bool(calls) == drawn
