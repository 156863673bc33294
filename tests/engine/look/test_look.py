"""Look over lifetime: the look table, the splat reading it, a Blender color ramp feeding it, and the color by
speed instead of age."""

import dataclasses

import bpy
import numpy as np

from addon.engine.look.look import LOOK_SIZE, look_table, particle_look
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


def test_by_speed_a_still_particle_has_the_start_color_and_one_at_color_speed_the_end_color_its_size_by_age():
    s = effect_settings({"color_start": (0.2, 0.4, 1.0), "color_end": (1, 1, 1), "size_end": 0.5, "color_by": "SPEED",
                         "color_speed": 4.0})
    velocity = np.array([[0, 0, 0], [0, 0, -2], [3, 0, 4], [0, 40, 0]], np.float32)
    t = np.array([0.0, 1.0, 0.5, 0.0], np.float32)
    look = particle_look(look_table(s), t, velocity, s)
    np.testing.assert_allclose(look[:, :3], [(0.2, 0.4, 1.0), (0.6, 0.7, 1.0), (1, 1, 1), (1, 1, 1)], rtol=1e-6)
    np.testing.assert_allclose(look[:, 3], [1.0, 0.5, 0.75, 1.0], rtol=1e-6)
    by_age = particle_look(look_table(s), t, velocity, dataclasses.replace(s, color_by="AGE"))
    np.testing.assert_allclose(by_age[:, 0], [0.2, 1.0, 0.6, 0.2], rtol=1e-6)


def test_splat_colored_by_speed_is_the_references(host, rng):
    """Points (the splat): each particle's color from its speed, some still, some past color_speed, with a ramp."""
    width, height, n = 97, 61, 20_000
    camera, system, compositor, pos_age, vel_life, _ = splat_case(host, rng, n, width, height, 4.0)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["velocity"][:] = rng.normal(0.0, 2.0, (n, 3))
    particle["velocity"][::7] = 0.0
    particle["age"][:] = rng.random(n, dtype=np.float32)
    s = effect_settings({"count": n, "size": 10.0, "size_end": 0.3, "color_random": 0.6, "seed": 5,
                         "color_by": "SPEED", "color_speed": 4.0})
    system.settings = s
    system.ramp = rng.random((LOOK_SIZE, 3), dtype=np.float32) * 3
    system.write_state(pos_age, vel_life)
    compositor.splat(system, camera)
    want_hi, want_lo, _ = ref_compositing.splat(pos_age, vel_life, camera.view_proj, width, height, s, 4.0,
                                                camera.pixels_per_unit, system.ramp)
    by_age, _, _ = ref_compositing.splat(pos_age, vel_life, camera.view_proj, width, height,
                                         dataclasses.replace(s, color_by="AGE"), 4.0,
                                         camera.pixels_per_unit, system.ramp)
    assert not np.array_equal(want_hi, by_age), "the speed must change the image"
    np.testing.assert_array_equal(compositor.read_accum()[0], want_hi)
    np.testing.assert_array_equal(compositor.read_accum()[1], want_lo)


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
