"""Glints: bright-point extraction diffed exactly against the numpy reference, sprites over the frame.

Every extraction layout (the seed's four) runs through Blender's ``gpu`` and
must write exactly the reference's points (tile, pixel, colour, luminance), in
tile order: the slot of each tile, so the stars blend in the same order every run.
"""

import numpy as np
import pytest

from addon.engine.draw import glints
from addon.engine.reference.draw import glints as reference
from addon.engine.settings.settings import render_settings

VARIANTS = list(glints.EXTRACT_VARIANTS)


def hdr_frame(rng, width, height, bright=0.01, peak=20.0):
    """A dim frame with a few bright pixels (some of them tied with a neighbour in the same tile)."""
    frame = np.zeros((height, width, 4), np.float32)
    frame[..., :3] = rng.random((height, width, 3), dtype=np.float32) * 0.8
    spots = rng.random((height, width)) < bright
    frame[spots, :3] = rng.random((int(spots.sum()), 3), dtype=np.float32) * peak
    ys, xs = np.nonzero(spots)
    for y, x in zip(ys[::3], xs[::3]):  # ties: the same colour again a pixel away, same tile or not
        frame[y, min(x + 1, width - 1), :3] = frame[y, x, :3]
    frame[..., 3] = 1.0
    return frame


def extract_on_gpu(host, kernel, frame, threshold):
    height, width = frame.shape[:2]
    stage = glints.GlintStage(host, width, height, render_settings(), kernel)
    texture = host.texture("frame", width, height, "RGBA32F", frame)
    stage.extract(texture, threshold)
    return stage.read_points()


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("size", [(64, 48), (77, 29)])  # whole tiles; partial tiles at the right and top
def test_extraction_equals_reference(host, rng, variant, size):
    frame = hdr_frame(rng, *size)
    got = extract_on_gpu(host, glints.EXTRACT_VARIANTS[variant], frame, 1.5)
    want = reference.extract(frame, 1.5)
    assert len(want.pixels) > 10
    assert len(got.pixels) == len(want.pixels), "one point per qualifying tile, none twice"
    assert got.as_set() == want.as_set()
    tile_order = np.lexsort((got.pixels[:, 0] // glints.TILE, got.pixels[:, 1] // glints.TILE))
    np.testing.assert_array_equal(tile_order, np.arange(len(got.pixels)), err_msg="the points in tile order")


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_tile_without_a_point_empties_its_slot(host, rng, variant):
    """Each frame writes every tile's slot: the points of the frame before do not stay (nothing clears the list)."""
    frame = hdr_frame(rng, 40, 24)
    height, width = frame.shape[:2]
    stage = glints.GlintStage(host, width, height, render_settings(), glints.EXTRACT_VARIANTS[variant])
    stage.extract(host.texture("frame", width, height, "RGBA32F", frame), 1.5)
    assert len(stage.read_points().pixels) > 3
    dark = frame.copy()
    dark[:, : width // 2, :3] = 0.0  # the left half's tiles lose their points
    stage.extract(host.texture("frame", width, height, "RGBA32F", dark), 1.5)
    assert stage.read_points().as_set() == reference.extract(dark, 1.5).as_set()


@pytest.mark.parametrize("variant", VARIANTS)
def test_edge_cases(host, variant):
    """Nothing above the threshold, a pixel exactly at it, NaN and infinity, a whole tile of ties."""
    kernel = glints.EXTRACT_VARIANTS[variant]
    frame = np.zeros((16, 24, 4), np.float32)
    assert len(extract_on_gpu(host, kernel, frame, 0.0).pixels) == 0  # strictly above: black never glints
    frame[2, 3, :3] = 1.0  # luminance 1.0 (rounded): above 0.5, and exactly the threshold below
    frame[9, 9, :3] = np.nan
    frame[10, 10, :3] = np.inf
    frame[8:16, 16:24, :3] = 4.0  # a tile of equal pixels: the lowest offset (its first pixel) wins
    frame[12, 13, 0] = 3.0
    for threshold in (0.5, float(reference.luminance(frame[2, 3, :3])), 100.0):
        want = reference.extract(frame, threshold)
        assert extract_on_gpu(host, kernel, frame, threshold).as_set() == want.as_set()
    points = reference.extract(frame, 0.5).as_set()
    assert {(p[2], p[3]) for p in points} == {(3, 2), (16, 8), (13, 12)}


def test_reference_picks_the_brightest_of_each_tile(rng):
    frame = hdr_frame(rng, 40, 24)
    points = reference.extract(frame, 1.0)
    lum = reference.luminance(frame[..., :3])
    for (x, y), color in zip(points.pixels, points.colors):
        tile = lum[y // 8 * 8:y // 8 * 8 + 8, x // 8 * 8:x // 8 * 8 + 8]
        assert color[3] == tile.max() == lum[y, x] > 1.0
        assert np.array_equal(color[:3], frame[y, x, :3])


def test_glints_draw_stars_on_bright_points_only(host):
    """A star lands on the bright pixel, rays along the set rotation, nothing away from it."""
    width, height = 96, 64
    frame = np.zeros((height, width, 4), np.float32)
    frame[20, 40, :3] = (8.0, 4.0, 2.0)
    frame[50, 10, :3] = (0.5, 0.5, 0.5)  # below the threshold: no glint
    render = render_settings({"glints": "STAR", "glint_threshold": 1.0, "glint_length": 0.25, "glint_rays": 4,
                              "glint_rotation": 0.0, "glint_intensity": 1.0})
    stage = glints.GlintStage(host, width, height, render)
    texture = host.texture("frame", width, height, "RGBA32F", frame)
    stage.apply(texture)
    out = host.read(texture)
    added = out[..., :3] - frame[..., :3]
    assert np.all(added >= 0)
    ray = added[20, 44:52, 0]  # along +x, the first ray at rotation 0
    assert ray[0] > 0.1 and np.all(np.diff(ray) < 0), "a ray fading to its tip"
    assert added[20, 40 + 20:, :].max() == 0, "rays end at their length (0.25 x 64 = 16 px)"
    assert added[28:36, 48:56].max() < 1e-3 * ray[0], "dark between the rays"
    assert added[45:56, 5:16].max() == 0, "nothing on the dim pixel"
    colour = added[20, 44, :3]
    np.testing.assert_allclose(colour / colour[0], frame[20, 40, :3] / 8.0, rtol=1e-2)  # tinted by the pixel
    assert not out[..., 3].any(), "glints are light: alpha (the sprites' coverage) stays 0"


def test_sprites_compile(host):
    host.compile(glints.SPRITES)


def test_bake_and_viewport_add_the_same_glints(scene):
    """The scene's glint settings light stars on the bake's frame; the viewport overlay draws the same frame."""
    from addon import viewport
    from addon.scene.renderer import SceneRenderer, camera_of
    from tests.conftest import add_effect

    add_effect(count=3000, emission_strength=40.0)
    settings = scene.gpu_particles
    settings.glints, settings.emax_mode = "NONE", "MANUAL"
    settings.viewport_point_filter = settings.point_filter  # the viewport draws points as the bake does
    width, height = 64, 36
    plain = SceneRenderer(scene, width, height).render(3)
    settings.glints, settings.glint_threshold, settings.glint_length = "FLARE", 1.0, 0.3
    renderer = SceneRenderer(scene, width, height)
    with_glints = renderer.render(3)
    points = renderer.glints.read_points()
    assert points.as_set() == reference.extract(plain, 1.0).as_set() and len(points.pixels) > 0
    added = with_glints[..., :3] - plain[..., :3]
    assert added.min() >= -1e-6 and added.sum() > 0.05 * plain[..., :3].sum()

    viewport.free()
    try:
        overlay = viewport.overlay()
        camera = camera_of(scene, width, height)
        scene.frame_set(3)
        frame = overlay.composite(scene, camera.view_proj, np.array(scene.camera.matrix_world.inverted()), width, height,
                                  measure=True)
        np.testing.assert_allclose(overlay.host.read(frame), with_glints, rtol=1e-3, atol=1e-3)
        assert "glints" in overlay.stats.stage_ms
        renderer = overlay.renderer
        settings.glints = "NONE"  # glints off (or retuned) in the panel: the next draw, no re-simulation
        frame = overlay.composite(scene, camera.view_proj, np.array(scene.camera.matrix_world.inverted()), width, height)
        assert overlay.renderer is renderer
        np.testing.assert_allclose(overlay.host.read(frame), plain, rtol=1e-3, atol=1e-3)
    finally:
        viewport.free()

