"""GPU kernels through bpy + gpu.init(), diffed against the numpy reference."""

import numpy as np
import pytest

from addon.engine.draw import compositing
from addon.engine.draw.frame_resources import FrameResources
from addon.engine.reference.draw import compositing as ref_compositing
from addon.engine.reference.simulate import simulation as ref_simulation
from addon.engine.seam import kernels
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import effect_settings, render_settings
from addon.engine.simulate import simulation
from addon.hosts.base import ShaderCompileError

IDENTITY = np.identity(4)


def moving_emitter(offset):
    m = np.identity(4)
    m[:3, 3] = offset
    return m


@pytest.mark.parametrize("count", [1, 255, 256, 1000, 70_001])
def test_init_particles_matches_reference(host, count):
    s = effect_settings({"count": count, "lifetime": 3.0})
    system = simulation.ParticleSystem(host, s)
    pos_age, vel_life = system.read_state()
    ref_pos_age, ref_vel_life = ref_simulation.init_particles(s)
    np.testing.assert_array_equal(pos_age, ref_pos_age)
    np.testing.assert_array_equal(vel_life, ref_vel_life)


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"emitter_shape": "POINT", "emission": "BURST", "lifetime": 0.2, "lifetime_random": 0.9},
        {"substeps": 3, "inherit_velocity": 0.5, "drag": 2.0, "seed": 77},
        {"lifetime": 0.05, "lifetime_random": 0.0},  # many respawns inside a frame
    ],
)
def test_simulate_matches_reference(host, overrides):
    s = effect_settings({"count": 5003, "lifetime": 0.5, **overrides})
    prev, cur = moving_emitter((0, 0, 0)), moving_emitter((0.3, -0.1, 0.2))
    system = simulation.ParticleSystem(host, s)
    dt = 1 / 24
    for _ in range(20):
        system.step(dt, prev, cur)
    pos_age, vel_life = system.read_state()
    ref_pos_age, ref_vel_life = ref_simulation.run_steps(s, 20, dt, prev, cur)
    # Same births and deaths everywhere (exact lifetime bookkeeping) ...
    np.testing.assert_array_equal(np.sign(PARTICLE.read_images(pos_age, vel_life)["life"]),
                                  np.sign(PARTICLE.read_images(ref_pos_age, ref_vel_life)["life"]))
    # ... and float state within a few ulps of accumulated float32 rounding.
    np.testing.assert_allclose(pos_age, ref_pos_age, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(vel_life, ref_vel_life, rtol=1e-4, atol=1e-4)
    assert np.isfinite(pos_age).all() and np.isfinite(vel_life).all()


def pixel_center_particles(rng, camera, n, width, height):
    """World positions that project exactly onto pixel centers (z = 0 plane)."""
    pixels = np.stack([rng.integers(0, width, n), rng.integers(0, height, n)], axis=1)
    ndc = (pixels + 0.5) / [width, height] * 2 - 1
    inverse = np.linalg.inv(camera.view_proj)
    world = np.concatenate([ndc, np.zeros((n, 1)), np.ones((n, 1))], axis=1) @ inverse.T
    return (world[:, :3] / world[:, 3:]).astype(np.float32), pixels






def splat_case(host, rng, n, width, height, emax, hot_pixels=None):
    """Particles on pixel centers of an orthographic camera, all alive, one pixel wide."""
    camera = compositing.Camera.pixel_grid(width, height)
    positions, pixels = pixel_center_particles(rng, camera, n, width, height)
    if hot_pixels is not None:
        positions[: len(hot_pixels)] = positions[0]
    s = effect_settings({"count": n, "color_start": (1, 1, 1), "color_end": (1, 1, 1), "size": 10.0,
                         "emission_strength": 1.0})
    system = simulation.ParticleSystem(host, s)
    pos_age = np.concatenate([positions, np.full((n, 1), 0.5, np.float32)], axis=1)
    vel_life = np.zeros((n, 4), np.float32)
    PARTICLE.read_images(pos_age, vel_life)["life"][:] = 1.0
    compositor = compositing.Compositor(FrameResources(host, width, height), render_settings({"emax": emax}))
    compositor.splat_kernels = {"FULL": compositing.SPLAT}  # the naive splat: overflow counts per particle add
    return camera, system, compositor, pos_age, vel_life, s


def test_splat_and_resolve_exact(host, rng):
    width, height, n = 193, 97, 40_000  # non-power-of-two target
    camera, system, compositor, pos_age, vel_life, s = splat_case(host, rng, n, width, height, 4.0)
    # Random ages give every particle its own color between start and end.
    s = effect_settings({**{k: getattr(s, k) for k in ("count", "size")}, "color_start": (3.0, 0.2, 1.0),
                         "color_end": (0.1, 2.5, 0.01), "emission_strength": 1.3})
    system.settings = s
    PARTICLE.read_images(pos_age, vel_life)["age"][:] = rng.random(n, dtype=np.float32) * 0.99
    system.write_state(pos_age, vel_life)
    compositor.splat(system, camera)
    hi, lo = compositor.read_accum()
    ref_hi, ref_lo, ref_overflow = ref_compositing.splat(pos_age, vel_life, camera.view_proj, width, height, s, 4.0,
                                                   camera.pixels_per_unit)
    assert np.count_nonzero(ref_hi) > width * height // 2
    np.testing.assert_array_equal(hi, ref_hi)
    np.testing.assert_array_equal(lo, ref_lo)
    assert compositor.take_stats().overflow == ref_overflow
    compositor.resolve()
    np.testing.assert_array_equal(compositor.read_frame(), ref_compositing.resolve(ref_hi, ref_lo, 4.0))
    assert not compositor.read_accum()[0].any(), "resolve clears the accumulation"


def test_splat_carry_and_overflow_in_one_pixel(host, rng):
    """Thousands of particles in one pixel: G's low bits carry, R and B overflow."""
    width, height, n = 8, 8, 9000
    camera, system, compositor, pos_age, vel_life, s = splat_case(host, rng, n, width, height, 1.0, hot_pixels=range(n))
    s = effect_settings({"count": n, "size": 10.0, "color_start": (0.5, 0.37, 0.6), "color_end": (0.5, 0.37, 0.6)})
    system.settings = s
    system.write_state(pos_age, vel_life)
    compositor.splat(system, camera)
    hi, lo = compositor.read_accum()
    ref_hi, ref_lo, ref_overflow = ref_compositing.splat(pos_age, vel_life, camera.view_proj, width, height, s, 1.0,
                                                   camera.pixels_per_unit)
    np.testing.assert_array_equal(hi, ref_hi)
    np.testing.assert_array_equal(lo, ref_lo)
    q_g = round(0.37 * ((1 << 22) - 1))
    assert (q_g & 0x7FF) * n >= 1 << 11, "the case must carry"
    assert ref_overflow > 0
    assert compositor.take_stats().overflow == ref_overflow


def test_splat_culls_nan_and_outside_frustum(host, rng):
    width, height, n = 64, 32, 6
    camera, system, compositor, pos_age, vel_life, s = splat_case(host, rng, n, width, height, 8.0)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["position"][0, 0] = np.nan
    particle["position"][1, 1] = np.inf
    particle["position"][2, 0] = -1.0  # left of the frustum
    particle["position"][3, 2] = 50.0  # beyond the far plane
    PARTICLE.read_images(pos_age, vel_life)["age"][4] = -0.1  # not born yet
    system.write_state(pos_age, vel_life)
    compositor.splat(system, camera)
    hi = compositor.read_accum()[0]
    x, y = (particle["position"][5, :2]).astype(int)
    assert np.count_nonzero(hi) == 1 and hi[y, x] != 0


def test_compile_error_names_file_and_quotes_log(host, tmp_path, monkeypatch):
    broken = kernels.Kernel("broken_for_test", includes=())
    shader_dir = tmp_path / "shaders"
    shader_dir.mkdir()
    (shader_dir / "broken_for_test.glsl").write_text("void main()\n{\n  undefined_function();\n}\n")
    monkeypatch.setattr(kernels, "resource_dir", lambda name: shader_dir)
    kernels._read.cache_clear()
    kernels._body.cache_clear()
    try:
        with pytest.raises(ShaderCompileError) as error:
            host.compile(broken)
    finally:
        kernels._read.cache_clear()
        kernels._body.cache_clear()
    message = str(error.value)
    assert "broken_for_test.glsl" in message
    assert "undefined_function" in message
    assert "broken_for_test.glsl:3" in message
