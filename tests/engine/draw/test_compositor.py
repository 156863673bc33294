"""The full compositor: auto Emax, scene depth (coarse + full), rasterized types, bad input."""

import numpy as np
import pytest

from addon.engine import registry
from addon.engine.draw import compositing, depth
from addon.engine.draw.frame_resources import FrameResources
from addon.engine.reference.draw import compositing as ref
from addon.engine.reference.draw import depth as ref_depth
from addon.engine.reference.draw import raster as ref_raster
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import SettingsError, effect_settings, render_settings
from tests.engine.test_kernels import splat_case


def test_next_emax_follows_peak_and_grows_after_overflow():
    stats = compositing.FrameStats
    assert compositing.next_emax(8.0, stats(0, 3.0), 2.0) == 6.0
    assert compositing.next_emax(8.0, stats(5, 3.0), 2.0) == 32.0, "an overflowed peak cannot be trusted"
    assert compositing.next_emax(8.0, stats(0, 0.0), 2.0) == 8.0, "an empty frame keeps Emax"
    assert compositing.next_emax(1e9, stats(1, 0.0), 2.0) == 1e9, "clamped to the field's range"


def test_resolve_measures_peak_and_auto_emax_uses_it(host, rng):
    width, height, n = 37, 21, 3000
    camera, system, compositor, pos_age, vel_life, s = splat_case(host, rng, n, width, height, 64.0)
    compositor.render = render_settings({"emax": 64.0, "emax_mode": "AUTO", "emax_headroom": 1.5})
    system.write_state(pos_age, vel_life)
    compositor.splat(system, camera)
    hi, lo = compositor.read_accum()
    compositor.resolve()
    stats = compositor.take_stats()
    assert stats.overflow == 0
    assert stats.peak == ref.peak(hi, lo, 64.0) > 0
    assert compositor.emax == pytest.approx(stats.peak * 1.5)
    # The next frame quantizes with the new Emax: finer steps, same picture.
    compositor.splat(system, camera)
    compositor.resolve()
    frame = compositor.read_frame()
    assert compositor.take_stats().overflow == 0
    np.testing.assert_allclose(frame[..., :3], ref.unpack(hi, lo, 64.0), atol=64.0 / (1 << 21) * 40)


def random_depth(rng, width, height):
    """Depth with flat tiles (whole-tile decisions) and noisy ones (full-resolution tests)."""
    scene_depth = rng.uniform(0.2, 0.8, (height, width)).astype(np.float32)
    scene_depth[:16, :16] = 0.1  # a near wall: everything behind
    scene_depth[16:32, :16] = 0.95  # far: everything in front
    return scene_depth


@pytest.mark.parametrize("width, height", [(1, 1), (16, 16), (53, 37), (130, 70)])
def test_coarse_depth_matches_reference(host, rng, width, height):
    scene_depth = rng.random((height, width), dtype=np.float32)
    target = depth.SceneDepth(host, width, height)
    target.depth = host.texture("scene_depth", width, height, "DEPTH32F", scene_depth)
    target.build_coarse()
    low, high = ref_depth.coarse_depth(scene_depth)
    coarse = host.read(target.coarse)
    np.testing.assert_array_equal(coarse[..., 0], low)
    np.testing.assert_array_equal(coarse[..., 1], high)


@pytest.mark.parametrize("kernel", [compositing.SPLAT, compositing.SPLAT_AGGREGATE])
def test_splat_hides_particles_behind_scene_depth(host, rng, kernel):
    width, height, n = 70, 45, 20_000
    camera, system, compositor, pos_age, vel_life, s = splat_case(host, rng, n, width, height, 64.0)
    particle = PARTICLE.read_images(pos_age, vel_life)
    compositor.splat_kernels = {"FULL": kernel}
    particle["position"][:, 2] = rng.uniform(-5, 5, n)  # window depth 0.25 .. 0.75 under ortho_camera
    system.write_state(pos_age, vel_life)
    scene_depth = random_depth(rng, width, height)
    target = depth.SceneDepth(host, width, height)
    target.depth = host.texture("scene_depth", width, height, "DEPTH32F", scene_depth)
    target.build_coarse()
    compositor.resources.use_depth(target)
    compositor.splat(system, camera)
    hi, lo = compositor.read_accum()
    ref_hi, ref_lo, _ = ref.splat(pos_age, vel_life, camera.view_proj, width, height, s, 64.0,
                                  camera.pixels_per_unit, scene_depth=scene_depth)
    all_hi, _, _ = ref.splat(pos_age, vel_life, camera.view_proj, width, height, s, 64.0, camera.pixels_per_unit)
    np.testing.assert_array_equal(hi, ref_hi)
    np.testing.assert_array_equal(lo, ref_lo)
    assert not hi[:16, :16].any(), "behind the near wall"
    np.testing.assert_array_equal(hi[16:32, :16], all_hi[16:32, :16])
    assert 0 < np.count_nonzero(ref_hi) < np.count_nonzero(all_hi)


def state_of(host, system, positions, velocities, age=0.5):
    n = len(positions)
    pos_age = np.concatenate([positions, np.full((n, 1), age, np.float32)], axis=1).astype(np.float32)
    vel_life = np.concatenate([velocities, np.ones((n, 1), np.float32)], axis=1).astype(np.float32)
    system.write_state(pos_age, vel_life)
    return pos_age, vel_life


@pytest.mark.parametrize("values", [{}, {"color_by": "SPEED", "color_speed": 2.0}], ids=["by age", "by speed"])
def test_gl_points_mode_draws_what_the_splat_draws(host, rng, values):
    """The rasterized peer: same pixels and colors as the splat, to half-float precision."""
    width, height, n = 61, 33, 4000
    camera, system, compositor, pos_age, vel_life, s = splat_case(host, rng, n, width, height, 64.0)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["age"][:] = rng.random(n, dtype=np.float32) * 0.9
    particle["velocity"][:] = rng.normal(0.0, 1.0, (n, 3))
    s = effect_settings({"count": n, "size": 10.0, "color_start": (0.3, 0.2, 0.1), "color_end": (0.01, 0.1, 0.2),
                         **values})
    system.settings = s
    system.write_state(pos_age, vel_life)
    compositor.render = render_settings({"emax": 64.0, "point_mode": "GL_POINTS"})
    compositor.add(system, camera)
    compositor.resolve()
    frame = compositor.read_frame()
    expected = ref_raster.points(pos_age, vel_life, camera.view_proj, width, height, s, camera.pixels_per_unit)
    assert not compositor.read_accum()[0].any(), "GL_POINTS mode does not splat"
    np.testing.assert_allclose(frame[..., :3], expected, rtol=1e-2, atol=2e-3)
    assert not frame[..., 3].any(), "light covers nothing: alpha 0"


@pytest.mark.parametrize("kind", ["SPRITE", "STRETCHED"])
def test_sprites_and_stretched_quads_draw_alongside_the_splat(host, kind):
    width, height = 64, 48
    camera = compositing.Camera.pixel_grid(width, height)
    s = effect_settings({"count": 2, "size": 4.0, "particle_type": kind, "stretch": 1.0,
                         "color_start": (1, 1, 1), "color_end": (1, 1, 1)})
    quads = compositing.ParticleSystem(host, s)
    state_of(host, quads, np.array([[20.0, 24.0, 0.0], [1e9, np.nan, 0.0]]), np.array([[12.0, 0.0, 0.0]] * 2))
    dots = compositing.ParticleSystem(host, effect_settings({"count": 1, "size": 10.0}))
    state_of(host, dots, np.array([[50.5, 10.5, 0.0]]), np.zeros((1, 3)))
    compositor = compositing.Compositor(FrameResources(host, width, height), render_settings({"emax": 64.0}))
    compositor.add(quads, camera)
    compositor.add(dots, camera)
    compositor.resolve()
    lit = compositor.read_frame()[..., 0] > 0
    assert lit[10, 50], "the splatted point is there too"
    lit[10, 50] = False
    ys, xs = np.nonzero(lit)
    assert lit.sum() > 9 and abs(ys.mean() - 24) < 1
    if kind == "SPRITE":
        assert abs(xs.mean() - 20) < 1 and xs.max() - xs.min() <= 9
    else:  # 12 units/s for 1 s: a streak from x = 8 to x = 20, plus the radius
        assert abs(xs.mean() - 14) < 1.5 and xs.max() - xs.min() >= 16
        assert ys.max() - ys.min() <= 9


def test_raster_is_hidden_behind_scene_depth(host):
    width, height = 32, 32
    camera = compositing.Camera.pixel_grid(width, height)
    s = effect_settings({"count": 2, "size": 3.0, "particle_type": "SPRITE"})
    system = compositing.ParticleSystem(host, s)
    state_of(host, system, np.array([[8.0, 16.0, 2.0], [24.0, 16.0, 2.0]]), np.zeros((2, 3)))
    scene_depth = np.full((height, width), 1.0, np.float32)
    scene_depth[:, 16:] = 0.4  # a wall in front of the right particle (its depth is 0.6)
    target = depth.SceneDepth(host, width, height)
    target.depth = host.texture("scene_depth", width, height, "DEPTH32F", scene_depth)
    target.build_coarse()
    compositor = compositing.Compositor(FrameResources(host, width, height), render_settings({"emax": 64.0}))
    compositor.resources.use_depth(target)
    compositor.add(system, camera)
    compositor.resolve()
    frame = compositor.read_frame()
    assert frame[:, :16, 0].sum() > 0
    assert frame[:, 16:, 0].sum() == 0


def test_every_kernel_and_raster_compiles(host):
    for declaration in registry.KERNELS:
        # Blender binds at most 8 images per shader; a ninth silently reads nothing.
        assert len(declaration.images) <= 8, declaration
        host.compile(declaration)


def test_bad_targets_are_refused(host):
    render = render_settings({"emax": 1.0})
    with pytest.raises(SettingsError, match="texture limit"):
        compositing.Compositor(FrameResources(host, host.max_texture_size + 1, 4), render)
    with pytest.raises(SettingsError, match="texture limit"):
        compositing.Compositor(FrameResources(host, 0, 4), render)
    side = host.max_texture_size  # within the texture limit, but more words than rows of the accumulation
    with pytest.raises(SettingsError, match="more pixels than this GPU's accumulation image can hold"):
        compositing.Compositor(FrameResources(host, side, side), render)
    with pytest.raises(SettingsError, match="emax must be positive"):
        compositing.Compositor(FrameResources(host, 4, 4), compositing.RenderSettings(emax=0.0))
    with pytest.raises(SettingsError, match="emax"):
        render_settings({"emax": -1.0})


@pytest.mark.parametrize("hot", [0, 300, 9000])
def test_aggregated_splat_leaves_the_same_images(host, rng, hot):
    """Shared-memory aggregation: bit-identical accumulation, overflow reported exactly when the splat's is."""
    width, height, n = 45, 23, 9000
    emax = 1.0 if hot == 9000 else 400.0
    camera, system, compositor, pos_age, vel_life, s = splat_case(host, rng, n, width, height, emax,
                                                                  hot_pixels=range(hot) if hot else None)
    particle = PARTICLE.read_images(pos_age, vel_life)
    s = effect_settings({"count": n, "size": 10.0, "color_start": (0.5, 0.37, 0.6), "color_end": (0.9, 0.99, 0.2)})
    system.settings = s
    particle["age"][:] = rng.random(n, dtype=np.float32) * 0.9
    system.write_state(pos_age, vel_life)
    compositor.splat_kernels = {"FULL": compositing.SPLAT_AGGREGATE}
    compositor.splat(system, camera)
    ref_hi, ref_lo, ref_overflow = ref.splat(pos_age, vel_life, camera.view_proj, width, height, s, emax,
                                             camera.pixels_per_unit)
    np.testing.assert_array_equal(compositor.read_accum()[0], ref_hi)
    np.testing.assert_array_equal(compositor.read_accum()[1], ref_lo)
    assert (compositor.take_stats().overflow > 0) == (ref_overflow > 0)
    assert (ref_overflow > 0) == (hot == 9000)


def test_quantization_psnr_falls_as_emax_grows(rng):
    """The float reference: quantization error is tiny near the peak and grows with Emax (6 dB per doubling)."""
    width, height, n = 64, 48, 20_000
    camera = compositing.Camera.pixel_grid(width, height)
    pos_age, vel_life = np.zeros((n, 4), np.float32), np.zeros((n, 4), np.float32)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["position"][:, :2] = rng.uniform(0, [width, height], (n, 2))
    particle["age"][:] = rng.random(n, dtype=np.float32) * 0.9
    particle["life"][:] = 1.0
    s = effect_settings({"count": n, "size": 10.0, "color_start": (1.0, 0.5, 0.2), "color_end": (0.1, 0.2, 0.9)})
    pixel, color = ref.project(pos_age, vel_life, camera.view_proj, width, height, s, camera.pixels_per_unit)
    peak = ref.float_accumulation(pixel, color, width, height).max()
    values = [ref.quantization_psnr(pixel, color, width, height, peak * k) for k in (1.01, 16, 256)]
    assert values[0] > 120
    assert values[0] > values[1] > values[2]
    assert values[1] - values[2] == pytest.approx(20 * np.log10(16), abs=2.0)


@pytest.mark.parametrize("kernel", [compositing.SPLAT, compositing.SPLAT_AGGREGATE])
def test_pixel_edges_and_frustum_planes_match_reference(host, kernel):
    """Particles exactly on pixel edges, on the frustum's side and far planes, and just outside them."""
    width, height = 24, 16
    xs = np.array([0.0, 1.0, 7.0, 12.0, 23.0, 24.0, -1e-4, 24.0001, 5.5, 5.5, 5.5, 5.5], np.float32)
    ys = np.array([0.0, 16.0, 3.0, 8.0, 15.0, 0.0, 4.0, 4.0, 0.0, 16.0, 7.0, 7.0], np.float32)
    zs = np.array([0.0, 0.0, 10.0, -10.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 10.001, 0.0], np.float32)
    n = len(xs)
    camera, system, compositor, pos_age, vel_life, s = splat_case(host, np.random.default_rng(0), n, width, height, 8.0)
    particle = PARTICLE.read_images(pos_age, vel_life)
    compositor.splat_kernels = {"FULL": kernel}
    particle["position"][:] = np.column_stack([xs, ys, zs])
    system.write_state(pos_age, vel_life)
    compositor.splat(system, camera)
    hi, lo = compositor.read_accum()
    ref_hi, ref_lo, _ = ref.splat(pos_age, vel_life, camera.view_proj, width, height, s, 8.0, camera.pixels_per_unit)
    np.testing.assert_array_equal(hi, ref_hi)
    np.testing.assert_array_equal(lo, ref_lo)
    assert ref_hi[0, 0] and ref_hi[15, 23] and ref_hi[0, 23], "edges and planes are inside, clamped to the last pixel"
    assert not ref_hi[4].any(), "just outside the left and right planes is culled"
    assert ref_hi[7, 5] and np.count_nonzero(ref_hi) == 9, "beyond the far plane is culled"
