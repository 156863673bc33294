"""Lit sprites with relief (sprite_sheets.py): normals from a sheet's alpha or a normal map, where each particle's
light comes from (the light pass), and the blend's shading across a sprite's face against the numpy reference."""

import dataclasses
import math

import bpy
import numpy as np
import pytest

from addon.engine.draw import compositing
from addon.engine.draw.compositing import camera_view
from addon.engine.draw.frame_resources import FrameResources
from addon.engine.light.light_pass import light_particles
from addon.engine.look.lighting import Light, SceneLights
from addon.engine.look.sprite_sheets import (
    alpha_normals,
    check_images,
    decoded_normals,
    has_relief,
    stored_normals,
)
from addon.engine.reference.look import lighting as ref_lighting
from addon.engine.reference.look import sprite_sheets as ref
from addon.engine.settings.settings import SettingsError, effect_settings, render_settings
from addon.engine.simulate.simulation import ParticleSystem
from tests.engine.light.test_lighting import LIGHTS, cloud, view_from
from tests.engine.look.test_sprite_textures import SIZE, draw_alpha, sheet_image, smooth_sheet, textured

HALF = 2.0**-10
WHITE = (1.0, 1.0, 1.0)
# A sun shining along -x: its light comes from +x (the screen's right under the pixel grid's camera).
FROM_THE_RIGHT = SceneLights((Light("SUN", WHITE, math.pi, (0.0, 0.0, 0.0), (-1.0, 0.0, 0.0)),))


def puff(size=16, columns=1, rows=1):
    """A sheet of round puffs: alpha a cone falling from 1 at each frame's center to 0 at its edge, color white."""
    h, w = rows * size, columns * size
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    u = (x % size + 0.5) / size * 2 - 1
    v = (y % size + 0.5) / size * 2 - 1
    pixels = np.ones((h, w, 4), np.float32)
    pixels[..., 3] = np.clip(1 - np.hypot(u, v), 0, 1)
    return pixels


def test_alpha_normals_slope_away_from_the_center_within_each_frame():
    pixels = puff(32, columns=2)
    pixels[:, 32:, 3] = 1.0  # the second frame opaque and flat
    normals = alpha_normals(pixels, 2, 1)
    # on the cone's flank, alpha falls by 1 over the half side: a 45 degree slope facing away from the center
    for y, x in ((16, 24), (28, 16), (5, 9)):  # right of the first frame's center (15.5, 15.5), above, below left
        away = np.array([x - 15.5, y - 15.5])
        np.testing.assert_allclose(normals[y, x, :2], math.sqrt(0.5) * away / np.linalg.norm(away), atol=0.02)
    assert not normals[:, 33:63].any(), "a flat frame faces the camera, its neighbour does not leak into it"
    assert np.abs(normals[..., :2]).max() < 1 and not normals[..., 2:].any()


def test_a_normal_map_is_decoded_and_made_unit():
    texels = np.array([[[0.5, 0.5, 1.0, 1.0], [1.0, 0.5, 0.5, 1.0], [0.5, 0.5, 0.5, 1.0], [0.8, 0.2, 0.9, 1.0]]],
                      np.float32)
    got = decoded_normals(texels)[0]
    np.testing.assert_allclose(got[0, :2], [0, 0], atol=1e-6)
    np.testing.assert_allclose(got[1, :2], [1, 0], atol=1e-6)
    np.testing.assert_allclose(got[2, :2], [0, 0], atol=1e-6)  # no normal: facing the camera
    n = np.array([0.6, -0.6, 0.8])
    np.testing.assert_allclose(got[3, :2], (n / np.linalg.norm(n))[:2], atol=1e-6)


def test_the_light_pass_writes_where_the_light_comes_from(host, rng):
    pos_age, vel_life = cloud(rng, 2000)
    settings = effect_settings({"count": len(pos_age), "lighting": "LIT", "blend_mode": "ALPHA",
                                "particle_type": "SPRITE", "sprite_image": "relief_cloud", "sprite_relief": 1.0,
                                "anisotropy": 0.3})
    sheet_image("relief_cloud", puff())
    system = ParticleSystem(host, settings)
    system.write_state(pos_age, vel_life)
    lights = SceneLights(LIGHTS, (0.05, 0.04, 0.03))
    view = camera_view((3.0, -4.0, 2.0), (0.0, 0.0, 0.0))
    light_particles(host, system, lights, view, FrameResources(host, 4, 4).look_texture(system))
    got = host.read(system.particle_light_direction).reshape(-1, 4)[:system.count]
    want = ref_lighting.light_direction(settings, lights, view, pos_age, vel_life)
    np.testing.assert_allclose(got[:, :2], want, atol=4 * HALF)
    assert not got[:, 2:].any() and (np.hypot(*want.T) > 0.3).mean() > 0.3, "the lights come from the sides"
    assert (np.hypot(*got[:, :2].T) <= 1 + 4 * HALF).all()
    radiance = host.read(system.particle_light).reshape(-1, 4)[:system.count, :3]
    np.testing.assert_allclose(radiance, ref_lighting.particle_light(settings, lights, (3.0, -4.0, 2.0), pos_age,
                                                                     vel_life), rtol=4 * HALF, atol=1e-6)


def test_a_sun_seen_from_the_side_and_along_the_view():
    """Only a light beside the view slopes the sprite: one behind the camera lights it evenly; the World's
    ambient light, from everywhere, flattens it by its share."""
    settings = effect_settings({"lighting": "LIT", "size": 1e-3})
    state = np.array([[0.0, 0.0, 0.0, 0.5]]), np.array([[0.0, 0.0, 0.0, 1.0]])
    side = ref_lighting.light_direction(settings, FROM_THE_RIGHT, view_from((0.0, 0.0, 5.0)), *state)
    np.testing.assert_allclose(side, [[1.0, 0.0]])
    behind = SceneLights((Light("SUN", WHITE, 1.0, (0.0, 0.0, 0.0), (0.0, 0.0, -1.0)),))
    np.testing.assert_allclose(ref_lighting.light_direction(settings, behind, view_from((0, 0, 5)), *state), [[0, 0]])
    ambient = SceneLights(FROM_THE_RIGHT.lights, (1.0, 1.0, 1.0))  # E / pi = 1 from the sun, 1 from the World
    np.testing.assert_allclose(ref_lighting.light_direction(settings, ambient, view_from((0, 0, 5)), *state),
                               [[0.5, 0.0]])


def lit_sprite(host, pixels, lights=FROM_THE_RIGHT, angle=0.0, age=0.5, **values):
    """One lit textured sprite (radius 6 px) at pixel (16, 16)'s corner under ``lights``: its layer, settings,
    radiance and light direction as the light pass wrote them."""
    sheet_image("relief", pixels)
    values = {"lighting": "LIT", "albedo": WHITE, "albedo_end": WHITE, "sprite_image": "relief", "rotation": angle,
              **values}
    system = textured(host, [(16.0, 16.0, 0.0, age)], **values)
    compositor = compositing.Compositor(FrameResources(host, SIZE, SIZE), render_settings())
    light_particles(host, system, lights, np.eye(4), compositor.resources.look_texture(system))
    radiance = host.read(system.particle_light).reshape(-1, 4)[0, :3]
    direction = host.read(system.particle_light_direction).reshape(-1, 4)[0, :2] if has_relief(system.settings) \
        else np.zeros(2)
    return draw_alpha(host, [system]).read(), system.settings, radiance, direction


def expected_relief(sheet, normals, settings, angle, position, radiance, direction, vectors=None):
    """The layer of lit_sprite from the reference: radiance x texel x shade, premultiplied, inside the square."""
    y, x = np.mgrid[0:SIZE, 0:SIZE] + 0.5
    offset = np.column_stack([x.ravel() - 16.0, y.ravel() - 16.0]) / 6.0
    c, s = math.cos(angle), math.sin(angle)
    local = np.column_stack([c * offset[:, 0] + s * offset[:, 1], c * offset[:, 1] - s * offset[:, 0]])
    inside = np.abs(local).max(axis=1) < 1
    uv = local * 0.5 + 0.5
    position = np.full(len(local), position)
    texel = ref.flipbook_texel(sheet, vectors, settings, position, uv)
    lights = ref.sprite_lights(np.tile(direction, (len(local), 1)), np.full(len(local), angle), settings.sprite_relief)
    shade = ref.relief_shade(normals, vectors, settings, position, uv, lights)
    want = np.zeros((SIZE * SIZE, 4))
    want[inside, :3] = (radiance * texel[:, :3] * texel[:, 3:] * shade[:, None])[inside]
    want[inside, 3] = texel[inside, 3]
    return want.reshape(SIZE, SIZE, 4)


@pytest.mark.parametrize("angle", [0.0, 0.7, -2.0])
def test_relief_shading_matches_the_reference(host, rng, angle):
    sheet = smooth_sheet(rng, 2, 2, 16)
    sheet[..., 3] = puff(16, 2, 2)[..., 3]
    sheet[sheet[..., 3] == 0] = 0.0  # Blender keeps float images premultiplied: no color where alpha is 0
    got, settings, radiance, direction = lit_sprite(host, sheet, angle=angle, sprite_relief=1.2, flipbook_columns=2,
                                                   flipbook_rows=2, age=0.45)
    np.testing.assert_allclose(direction, [1.0, 0.0], atol=HALF)
    want = expected_relief(sheet, stored_normals(alpha_normals(sheet, 2, 2)), settings, angle, 3 * 0.45, radiance,
                           direction)
    np.testing.assert_allclose(got, want, atol=4e-3 * radiance.max())
    flat = expected_relief(sheet, np.zeros_like(sheet), settings, angle, 3 * 0.45, radiance, direction)
    assert np.abs(want - flat).max() > 0.2 * radiance.max(), "relief changes the sprite"


def test_relief_moves_light_across_the_face_and_keeps_it(host):
    """A round puff lit from its right: its right half brighter, its left darker, its light the same in all."""
    sheet = puff(32)
    even, *_ = lit_sprite(host, sheet, sprite_relief=0.0)
    relief, _, radiance, _ = lit_sprite(host, sheet, sprite_relief=1.0)
    np.testing.assert_array_equal(relief[..., 3], even[..., 3])
    right, left = relief[:, 17:, 0].sum(), relief[:, :16, 0].sum()
    assert right > 1.8 * left and right > 1.3 * even[:, 17:, 0].sum()
    np.testing.assert_allclose(relief[..., :3].sum(), even[..., :3].sum(), rtol=0.02)


def test_a_normal_map_sheet_shades_by_its_normals(host, tmp_path):
    """A flat sheet whose normal map tilts every texel to the right by 0.6: lit from the right, 1 + 0.6 x relief
    of the even color; lit from the left, 1 - 0.6 x relief."""
    sheet = np.ones((8, 8, 4), np.float32)
    normal_map = np.zeros((8, 8, 4), np.float32)
    normal_map[...] = (0.8, 0.5, 0.9, 1.0)  # (0.6, 0, 0.8) encoded
    sheet_image("relief_normals", normal_map)
    from_the_left = SceneLights((Light("SUN", WHITE, math.pi, (0.0, 0.0, 0.0), (1.0, 0.0, 0.0)),))
    even, _, radiance, _ = lit_sprite(host, sheet, sprite_relief=0.0)
    for lights, sign in ((FROM_THE_RIGHT, 1.0), (from_the_left, -1.0)):
        got, *_ = lit_sprite(host, sheet, lights, sprite_relief=0.5, sprite_normals="relief_normals")
        np.testing.assert_allclose(got[16, 16, :3], even[16, 16, :3] * (1 + sign * 0.6 * 0.5), rtol=4e-3)


def test_additive_quads_are_shaded_as_alpha_sprites(host):
    """An Add effect's textured quad with relief: its normal map tilts every texel to the right by 0.6, so lit
    from the right it adds 1 + 0.6 x relief of its even light, as the alpha blend shades it; turned a half turn,
    its normals face left and it adds 1 - 0.6 x relief."""
    sheet_image("relief_flat", np.ones((8, 8, 4), np.float32))
    sheet_image("relief_normals", np.broadcast_to(np.float32([0.8, 0.5, 0.9, 1.0]), (8, 8, 4)).copy())

    def added(relief, angle=0.0):
        system = textured(host, [(16.0, 16.0, 0.0, 0.5)], blend_mode="ADD", lighting="LIT", albedo=WHITE,
                          albedo_end=WHITE, sprite_image="relief_flat", sprite_normals="relief_normals",
                          sprite_relief=relief, rotation=angle)
        target = compositing.Compositor(FrameResources(host, SIZE, SIZE), render_settings())
        light_particles(host, system, FROM_THE_RIGHT, np.eye(4), target.resources.look_texture(system))
        target.add(system, compositing.Camera.pixel_grid(SIZE, SIZE))
        target.resolve()
        return target.read_frame()[16, 16, :3]

    even = added(0.0)
    assert even.min() > 0.5
    np.testing.assert_allclose(added(0.5), even * 1.3, rtol=4e-3)
    np.testing.assert_allclose(added(0.5, math.pi), even * 0.7, rtol=4e-3)


def test_a_sprite_without_relief_beside_one_with_it_draws_as_alone(host):
    """Two effects of one sheet, one with relief and one without, in one blend: the one without draws as it does
    alone (its sprites' lights are written as none)."""
    sheet_image("shared_relief", puff(16))
    values = {"lighting": "LIT", "sprite_image": "shared_relief"}
    plain = textured(host, [(8.0, 8.0, 0.0, 0.5)], **values)
    shaded = textured(host, [(24.0, 24.0, 0.0, 0.5)], sprite_relief=2.0, **values)
    compositor = compositing.Compositor(FrameResources(host, SIZE, SIZE), render_settings())
    for system in (plain, shaded):
        light_particles(host, system, FROM_THE_RIGHT, np.eye(4), compositor.resources.look_texture(system))
    alone = draw_alpha(host, [plain]).read()
    both = draw_alpha(host, [plain, shaded]).read()
    np.testing.assert_array_equal(both[:14, :14], alone[:14, :14])
    assert both[24, 26, 0] > 1.2 * both[24, 21, 0], "the other one lit from its right"


def test_relief_asks_for_a_lit_textured_effect():
    base = {"sprite_image": "x", "lighting": "LIT", "sprite_relief": 1.0, "blend_mode": "ALPHA"}
    assert has_relief(effect_settings(base))
    assert has_relief(effect_settings({**base, "blend_mode": "ADD", "particle_type": "SPRITE"}))
    for change in ({"sprite_relief": 0.0}, {"lighting": "EMISSION"}, {"sprite_image": ""},
                   {"blend_mode": "ADD", "particle_type": "POINT"}):
        assert not has_relief(effect_settings({**base, **change})), change


def test_a_missing_or_misfit_normal_map_is_named(host):
    sheet_image("relief_sheet", puff(16, 2, 2))
    settings = effect_settings({"sprite_image": "relief_sheet", "sprite_normals": "no such normals.png",
                                "flipbook_columns": 2, "flipbook_rows": 2, "blend_mode": "ALPHA"})
    with pytest.raises(SettingsError, match="no such normals"):
        check_images(settings, host)
    sheet_image("relief_misfit", np.ones((9, 8, 4), np.float32))
    with pytest.raises(SettingsError, match="relief_misfit.*does not divide"):
        check_images(dataclasses.replace(settings, sprite_normals="relief_misfit"), host)


def test_a_normal_map_removed_while_used_is_named_and_comes_back(host):
    sheet_image("relief_removed", np.broadcast_to(np.float32([0.8, 0.5, 0.9, 1.0]), (16, 16, 4)).copy())
    first, *_ = lit_sprite(host, puff(16), sprite_relief=1.0, sprite_normals="relief_removed")
    bpy.data.images.remove(bpy.data.images["relief_removed"])
    with pytest.raises(SettingsError, match="'relief_removed': no image of that name"):
        lit_sprite(host, puff(16), sprite_relief=1.0, sprite_normals="relief_removed")
    sheet_image("relief_removed", np.broadcast_to(np.float32([0.8, 0.5, 0.9, 1.0]), (16, 16, 4)).copy())
    again, *_ = lit_sprite(host, puff(16), sprite_relief=1.0, sprite_normals="relief_removed")
    np.testing.assert_array_equal(again, first)
