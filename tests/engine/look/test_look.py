"""Look over lifetime: the look table, the splat reading it, and a Blender color ramp feeding it."""

import bpy
import numpy as np

from addon.engine.look.look import LOOK_SIZE, look_table
from addon.engine.reference.draw import compositing as ref_compositing
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import effect_settings
from tests.conftest import add_effect
from tests.engine.test_kernels import splat_case


def test_look_table_from_colors_and_size_end():
    s = effect_settings({"color_start": (1, 0, 0), "color_end": (0, 0, 2), "size_end": 0.25})
    table = look_table(s)
    assert table.shape == (LOOK_SIZE, 4)
    np.testing.assert_allclose(table[0], (1, 0, 0, 1))
    np.testing.assert_allclose(table[-1], (0, 0, 2, 0.25))
    np.testing.assert_allclose(table[LOOK_SIZE // 2, 3], 1 - 0.75 * (LOOK_SIZE // 2) / (LOOK_SIZE - 1), rtol=1e-6)


def test_splat_with_ramp_size_over_life_and_random_variation_is_exact(host, rng):
    width, height, n = 97, 61, 20_000
    camera, system, compositor, pos_age, vel_life, _ = splat_case(host, rng, n, width, height, 4.0)
    particle = PARTICLE.read_images(pos_age, vel_life)
    # Sub-pixel sizes, so the size ramp and the size variation change the coverage.
    s = effect_settings({"count": n, "size": 0.4, "size_end": 0.3, "color_random": 0.6, "size_random": 0.8,
                         "emission_strength": 2.0, "seed": 17})
    system.settings = s
    system.ramp = rng.random((LOOK_SIZE, 3), dtype=np.float32) * 3
    particle["age"][:] = rng.random(n, dtype=np.float32)
    system.write_state(pos_age, vel_life)
    compositor.splat(system, camera)
    ref_hi, ref_lo, _ = ref_compositing.splat(pos_age, vel_life, camera.view_proj, width, height, s, 4.0,
                                              camera.pixels_per_unit, system.ramp)
    plain_hi, _, _ = ref_compositing.splat(pos_age, vel_life, camera.view_proj, width, height,
                                           effect_settings({"count": n, "size": 0.4}), 4.0, camera.pixels_per_unit)
    assert not np.array_equal(ref_hi, plain_hi), "the look must change the image"
    np.testing.assert_array_equal(compositor.read_accum()[0], ref_hi)
    np.testing.assert_array_equal(compositor.read_accum()[1], ref_lo)


def test_blender_color_ramp_drives_the_look(scene):
    from addon.scene.inputs import ramp_colors
    from addon.scene.renderer import SceneRenderer

    effect = add_effect(count=3000, color_start=(1, 0, 0), color_end=(0, 0, 1))
    assert ramp_colors(effect) is None
    assert bpy.ops.gpu_particles.add_color_ramp() == {"FINISHED"}
    ramp = effect.ramp_texture.color_ramp
    middle = ramp.elements.new(0.5)
    middle.color = (0, 4, 0, 1)
    colors = ramp_colors(effect)
    np.testing.assert_allclose(colors[0], (1, 0, 0), atol=1e-6)
    np.testing.assert_allclose(colors[-1], (0, 0, 1), atol=1e-6)
    assert colors[:, 1].max() > 3.5
    renderer = SceneRenderer(scene, 32, 18)
    frame = renderer.render(2)
    np.testing.assert_array_equal(renderer.simulation.systems[0].ramp, colors)
    assert np.isfinite(frame).all()
