"""Splat kernels x accumulation layouts (accum.glsl): every combination bit-exact against the reference.

Paired: hi and lo side by side in one image, the pixels in raster order.  Aggregated over
256 x 1, 2 or 4 particles a group: the table's sums must not wrap even when
every particle of a group saturates one pixel.
"""

import numpy as np
import pytest

from addon.engine.draw import compositing, depth
from addon.engine.draw.frame_resources import FrameResources
from addon.engine.reference.draw import compositing as ref
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import effect_settings, render_settings
from tests.engine.draw.test_compositor import random_depth
from tests.engine.test_kernels import splat_case

KERNELS = {"naive": compositing.SPLAT, **{f"aggregate{k}": compositing.aggregate_kernel(compositing.SPLAT, k)
                                          for k in (1, 2, 4)}}
COMBINATIONS = [(name, paired) for name in KERNELS for paired in (False, True)]


def layout_case(host, rng, n, width, height, emax, name, paired, hot_pixels=None):
    camera, system, _, pos_age, vel_life, s = splat_case(host, rng, n, width, height, emax, hot_pixels)
    compositor = compositing.Compositor(FrameResources(host, width, height), render_settings({"emax": emax}), paired=paired)
    compositor.splat_kernels = {"FULL": KERNELS[name]}
    return camera, system, compositor, pos_age, vel_life, s


def check_against_reference(compositor, system, camera, pos_age, vel_life, s, emax, name, **ref_options):
    width, height = compositor.width, compositor.height
    system.write_state(pos_age, vel_life)
    compositor.splat(system, camera)
    hi, lo = compositor.read_accum()
    ref_hi, ref_lo, ref_overflow = ref.splat(pos_age, vel_life, camera.view_proj, width, height, s, emax,
                                             camera.pixels_per_unit, **ref_options)
    np.testing.assert_array_equal(hi, ref_hi)
    np.testing.assert_array_equal(lo, ref_lo)
    overflow = compositor.take_stats().overflow
    # Aggregated splats count overflowing group adds: zero exactly when the per-particle count is.
    assert overflow == ref_overflow if name == "naive" else (overflow > 0) == (ref_overflow > 0)
    compositor.resolve()
    np.testing.assert_array_equal(compositor.read_frame(), ref.resolve(ref_hi, ref_lo, emax))
    assert not any(a.any() for a in compositor.read_accum()), "resolve clears both words"
    return ref_hi, ref_overflow


@pytest.mark.parametrize("name, paired", COMBINATIONS)
def test_random_particles_exact(host, rng, name, paired):
    width, height, n = 193, 97, 40_001  # rows not a multiple of 2 or 4: the last group is partly empty
    camera, system, compositor, pos_age, vel_life, s = layout_case(host, rng, n, width, height, 4.0, name, paired)
    particle = PARTICLE.read_images(pos_age, vel_life)
    s = effect_settings({"count": n, "size": 10.0, "color_start": (3.0, 0.2, 1.0), "color_end": (0.1, 2.5, 0.01),
                         "emission_strength": 1.3})
    system.settings = s
    particle["age"][:] = rng.random(n, dtype=np.float32) * 0.99
    ref_hi, _ = check_against_reference(compositor, system, camera, pos_age, vel_life, s, 4.0, name)
    assert np.count_nonzero(ref_hi) > width * height // 2


@pytest.mark.parametrize("name, paired", COMBINATIONS)
@pytest.mark.parametrize("emax", [1.0, 1e-3])
def test_one_pixel_carry_and_overflow(host, rng, name, paired, emax):
    """9000 particles on one pixel; at emax 1e-3 every channel clamps to its maximum (the table's worst sums)."""
    width, height, n = 8, 8, 9000
    camera, system, compositor, pos_age, vel_life, s = layout_case(host, rng, n, width, height, emax, name, paired,
                                                                   hot_pixels=range(n))
    s = effect_settings({"count": n, "size": 10.0, "color_start": (0.5, 0.37, 0.6), "color_end": (0.5, 0.37, 0.6)})
    system.settings = s
    _, ref_overflow = check_against_reference(compositor, system, camera, pos_age, vel_life, s, emax, name)
    assert ref_overflow > 0


@pytest.mark.parametrize("name", ["naive", "aggregate4"])
def test_paired_with_scene_depth(host, rng, name):
    width, height, n = 70, 45, 20_000
    camera, system, compositor, pos_age, vel_life, s = layout_case(host, rng, n, width, height, 64.0, name, True)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["position"][:, 2] = rng.uniform(-5, 5, n)
    scene_depth = random_depth(rng, width, height)
    target = depth.SceneDepth(host, width, height)
    target.depth = host.texture("scene_depth", width, height, "DEPTH32F", scene_depth)
    target.build_coarse()
    compositor.resources.use_depth(target)
    ref_hi, _ = check_against_reference(compositor, system, camera, pos_age, vel_life, s, 64.0, name,
                                        scene_depth=scene_depth)
    assert not ref_hi[:16, :16].any()
