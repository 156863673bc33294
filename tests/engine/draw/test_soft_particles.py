"""Soft particles (addon/engine/draw/soft_particles.py): alpha sprites fade over soft_distance before the scene's depth.

The depth map against distances worked out in float64; then the blend through the product's path
(SpriteLayer with a scene depth) against ``reference.sprites.blend`` with the same fade
(``reference.soft_particles``), held to the tolerance test_sprites_reference.py explains.
"""

import numpy as np
import pytest

from addon.engine.draw.compositing import Camera, Compositor, camera_view, perspective
from addon.engine.draw.depth import SceneDepth
from addon.engine.draw.frame_resources import FrameResources
from addon.engine.draw.soft_particles import soft_depth
from addon.engine.draw.sprites import SpriteLayer
from addon.engine.reference.draw import sprites as ref
from addon.engine.reference.draw.soft_particles import soft_fade
from addon.engine.reference.order.tile_lists import tile_lists
from addon.engine.settings.settings import SettingsError, render_settings
from tests.engine.draw.test_sprites_reference import (
    BLEND_TOLERANCE,
    HEIGHT,
    WIDTH,
    assert_blend_close,
    effect,
    reference_footprints,
)


def window_depth(view_proj, points):
    clip = np.c_[points, np.ones(len(points))] @ np.asarray(view_proj, np.float64).T
    return clip[:, 2] / clip[:, 3] * 0.5 + 0.5


def perspective_camera():
    view = camera_view((0.5, -6.0, 1.0), (0.0, 0.0, 0.0))
    return Camera(perspective(0.9, WIDTH / HEIGHT, 0.5, 40.0) @ view, WIDTH, HEIGHT), view


@pytest.mark.parametrize("kind", ["PERSPECTIVE", "ORTHO"])
def test_depth_map_gives_distances_along_the_camera_axis(kind):
    """Window depths back to distances: differences over the fade distance, in float64, for both projections."""
    camera, view = perspective_camera()
    if kind == "ORTHO":  # 8 x 6 units across, near 0.5, far 40
        ortho = np.diag([2 / 8, 2 / 6, -2 / 39.5, 1.0])
        ortho[2, 3] = -40.5 / 39.5
        camera = Camera(ortho @ view, WIDTH, HEIGHT)
    points = np.array([[0.1, 0.2, 0.0], [-0.5, 0.3, 2.0], [0.3, -0.2, -1.5], [0.0, 0.0, 4.0]])
    distance = -(np.c_[points, np.ones(4)] @ view.T)[:, 2]  # along the camera's -z
    x, y, z, w = soft_depth(camera.view_proj, 0.25)
    d = window_depth(camera.view_proj, points)
    mapped = (x * d + y) / (z * d + w)
    np.testing.assert_allclose(mapped - mapped[0], (distance - distance[0]) / 0.25, rtol=1e-9, atol=1e-9)


def soft_scene(host):
    """Sprites of a perspective camera, some in front of a wall, some crossing it, some behind it."""
    camera, _ = perspective_camera()
    rng = np.random.default_rng(5)
    n = 40
    pos_age = np.column_stack([rng.uniform(-3, 3, n), rng.uniform(-1.2, 1.2, n), rng.uniform(-2, 2, n),
                               rng.uniform(0, 0.99, n)]).astype(np.float32)
    effects = [effect(host, pos_age, size=0.4)]
    wall = window_depth(camera.view_proj, np.array([[0.0, 0.0, 0.0]]))[0]
    scene_depth = np.full((HEIGHT, WIDTH), wall, np.float32)  # a wall through the emitter, square to the view
    scene_depth[:, :8] = 1.0  # nothing on the left edge
    return camera, effects, scene_depth


def blend(host, effects, camera, scene_depth, distance):
    resources = FrameResources(host, camera.width, camera.height)
    depth = SceneDepth(host, camera.width, camera.height)
    depth.depth = host.texture("scene_depth", camera.width, camera.height, "DEPTH32F", scene_depth)
    depth.build_coarse()
    resources.use_depth(depth)
    layer = SpriteLayer(host, camera.width, camera.height)
    layer.draw([system for system, _, _ in effects], resources, camera, soft_distance=distance)
    return layer.read()


def reference_blend(effects, camera, scene_depth, distance):
    shape, streak, color, key = reference_footprints(effects, camera)
    lists = tile_lists(shape, streak, camera.width, camera.height, ref.depth_order(key), whole_rows=True)
    depth_map = soft_depth(camera.view_proj, distance) if distance > 0 else None
    return ref.blend(shape, streak, color, lists, camera.width, camera.height, scene_depth, depth_map)


def test_sprites_fade_into_the_scene_as_the_reference(host):
    camera, effects, scene_depth = soft_scene(host)
    want, bound = reference_blend(effects, camera, scene_depth, 1.5)
    got = blend(host, effects, camera, scene_depth, 1.5)
    assert_blend_close(got, want, bound)
    hard, _ = reference_blend(effects, camera, scene_depth, 0.0)
    np.testing.assert_array_equal(want[:, :8], hard[:, :8])  # no scene there: nothing to fade into
    faded = want[:, 8:, 3] < hard[:, 8:, 3] - 1e-3
    assert faded.sum() > 50, "sprites near the wall are fainter"
    assert (want[..., 3] <= hard[..., 3] + BLEND_TOLERANCE).all(), "a fade never adds coverage"


def test_off_is_the_hard_depth_test_exactly(host):
    """soft_distance 0 draws with the same kernel as before: the layer is the hard-edged one bit for bit."""
    camera, effects, scene_depth = soft_scene(host)
    compositor = Compositor(FrameResources(host, WIDTH, HEIGHT), render_settings())
    assert compositor.render.soft_distance == 0.0
    got = blend(host, effects, camera, scene_depth, 0.0)
    want, bound = reference_blend(effects, camera, scene_depth, 0.0)
    assert_blend_close(got, want, bound)


def test_fade_values():
    """The fade of a sprite 0, 1/4, 1/2, 1 and 2 fade distances in front of the scene, and behind it."""
    camera, _ = perspective_camera()
    depth_map = soft_depth(camera.view_proj, 2.0)
    axis = np.array([0.5, -6.0, 1.0]) / np.linalg.norm([0.5, -6.0, 1.0])  # from the target toward the camera
    scene = window_depth(camera.view_proj, np.zeros((1, 3)))
    sprites = window_depth(camera.view_proj, np.outer([0.0, 0.5, 1.0, 2.0, 4.0, -0.5], axis))
    np.testing.assert_allclose(soft_fade(sprites, scene, depth_map), [0.0, 0.25, 0.5, 1.0, 1.0, 0.0], atol=2e-4)


def test_negative_distance_is_refused():
    with pytest.raises(SettingsError, match="soft_distance"):
        render_settings({"soft_distance": -1.0})


def test_final_render_layer_fades_into_a_wall(scene):
    """The final render's particle layer is drawn over the depth pre-pass of the scene's meshes (render_layer.py),
    so its sprites fade into a wall there as in the viewport and the bake: less coverage, never more (but for
    the stop of opaque pixels)."""
    import bpy

    from addon.output.render_layer import ParticleLayer
    from tests.conftest import add_effect

    add_effect(count=3000, blend_mode="ALPHA", opacity=0.8, size=0.08)
    bpy.ops.mesh.primitive_plane_add(size=40.0, location=(0.0, 0.5, 0.0), rotation=(1.5708, 0.0, 0.0))  # behind
    hard, _ = ParticleLayer(scene).render(3)
    hard = hard.copy()
    scene.gpu_particles.soft_distance = 1.0
    soft, _ = ParticleLayer(scene).render(3)
    assert soft[..., 3].sum() < 0.8 * hard[..., 3].sum()
    # (A pixel left 1/4096 to see stops after a chunk: one that stopped only when hard goes on when soft.)
    assert (soft[..., 3] <= hard[..., 3] + 1 / 4096).all()
