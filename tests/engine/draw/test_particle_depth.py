"""particle_depth.glsl (and particle_depth_tiles.glsl) against the numpy reference: the nearest lit particle over
every pixel its light covers (the 2x2 of the anti-aliased point, a motion-blur streak, a circle of confusion, a
bokeh disc, a sprite), culling; and that every pixel the light reaches has a depth, so an object in front of part
of a wide footprint hides exactly that part in the render's compositor."""


import numpy as np
import pytest

from addon.engine.draw.compositing import Camera, Compositor
from addon.engine.draw.footprint import Focus, Shutter
from addon.engine.draw.frame_resources import FrameResources
from addon.engine.draw.particle_depth import FAR, ParticleDepth, reach_kind
from addon.engine.reference.draw.particle_depth import nearest_depth
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import effect_settings, render_settings
from addon.engine.simulate.simulation import ParticleSystem

W, H = 40, 24
WIDE_W, WIDE_H = 96, 48  # several tiles: wide reaches go through the tile lists


def deep_camera(width, height, shutter=None, focus=None) -> Camera:
    """The pixel grid with clip w = 1 + z / 4 (exact divisions at z 0, 4, 12, 28), with ``shutter`` and ``focus``."""
    view_proj = Camera.pixel_grid(width, height).view_proj.copy()
    view_proj[3] = [0.0, 0.0, 0.25, 1.0]
    return Camera(view_proj, width, height,
                  shutter and Shutter.still(view_proj, *shutter), focus and Focus(*focus))


DEEP_VIEW = np.diag([1.0, 1.0, -0.25, 1.0])  # world to view: depth along the axis is clip w
DEEP_VIEW[2, 3] = -1.0


def depth_case(host, pos_age, vel_life, camera=None, view=None, **values):
    """(GPU depth, reference depth, the effect's settings) of these particles."""
    settings = effect_settings({"count": len(pos_age), **values})
    system = ParticleSystem(host, settings)
    system.write_state(pos_age, vel_life)
    camera = camera or Camera.pixel_grid(W, H)
    view = np.identity(4) if view is None else view  # identity: world = view, depth is -z
    layer = ParticleDepth(host, camera.width, camera.height)
    layer.clear()
    layer.add(system, camera, view, FrameResources(host, camera.width, camera.height).look_texture(system))
    expected = nearest_depth(pos_age, vel_life, camera.view_proj, -view[2], camera.width, camera.height, settings,
                             camera.pixels_per_unit, kind=reach_kind(settings), shutter=camera.shutter,
                             focus=camera.focus)
    return layer.read(), expected


def test_lit_particles_mark_where_they_scatter_light(host, rng):
    """A Lit effect emits nothing (its emission is packed as 0): its particles show, and mark depth, by the light
    pass's radiance; those the light pass left dark mark nothing (final renders hid every lit effect before)."""
    n = 300
    pos_age, vel_life = np.zeros((n, 4), np.float32), np.zeros((n, 4), np.float32)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["position"][:, :2] = rng.uniform(0, [W, H], (n, 2))
    particle["position"][:, 2] = rng.uniform(-9.5, 0.0, n)
    particle["age"][:] = 0.5
    particle["life"][:] = 1.0
    light = np.zeros((n, 4), np.float32)
    light[: n // 2, :3] = rng.uniform(0.01, 2.0, (n // 2, 3))  # half lit, half in the dark
    camera = Camera.pixel_grid(W, H)
    for lighting in ("LIT", "BOTH"):
        settings = effect_settings({"count": n, "lighting": lighting, "emission_strength": 0.0, "size": 0.3})
        system = ParticleSystem(host, settings)
        system.write_state(pos_age, vel_life)
        width, rows = system.pos_age.width, system.pos_age.height
        padded = np.zeros((width * rows, 4), np.float32)
        padded[:n] = light
        system.particle_light = host.texture("particle_light", width, rows, "RGBA16F", padded.reshape(rows, width, 4))
        layer = ParticleDepth(host, W, H)
        layer.clear()
        layer.add(system, camera, np.identity(4), FrameResources(host, W, H).look_texture(system))
        expected = nearest_depth(pos_age, vel_life, camera.view_proj, -np.identity(4)[2], W, H, settings,
                                 camera.pixels_per_unit, particle_light=padded[:n])
        np.testing.assert_array_equal(layer.read(), expected)
        dark = nearest_depth(pos_age[n // 2:], vel_life[n // 2:], camera.view_proj, -np.identity(4)[2], W, H,
                             settings, camera.pixels_per_unit, particle_light=light[n // 2:])
        assert (expected < FAR).sum() > 20 and (dark == FAR).all(), lighting


def deep_particles(rng, n, width, height, speed=0.0):
    """Random positions at the depths of deep_camera, some off the target, some unborn or dead."""
    pos_age, vel_life = np.empty((n, 4), np.float32), np.zeros((n, 4), np.float32)
    particle = PARTICLE.read_images(pos_age, vel_life)
    position = particle["position"]
    position[:, 2] = rng.choice(np.array([0.0, 4.0, 12.0, 28.0], np.float32), n)
    w = 1.0 + position[:, 2] / 4.0
    for axis, extent in enumerate((width, height)):
        position[:, axis] = extent / 2 + (rng.uniform(-8, extent + 8, n) - extent / 2) * w
    particle["age"][:] = rng.uniform(-0.2, 1.2, n)
    particle["velocity"][:, :2] = rng.normal(0.0, speed, (n, 2))
    particle["life"][:] = 1.0
    return pos_age, vel_life


def test_random_particles_match_the_reference(host, rng):
    n = 300
    pos_age, vel_life = np.zeros((n, 4), np.float32), np.zeros((n, 4), np.float32)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["position"][:, 0] = rng.uniform(-2, W + 2, n)  # some outside the view
    particle["position"][:, 1] = rng.uniform(-2, H + 2, n)
    particle["position"][:, 2] = rng.uniform(-9.5, 1.0, n)  # depths 0 (clamped: behind the view plane) to 9.5
    particle["age"][:] = rng.uniform(-0.5, 2.0, n)  # some unborn, some dead
    particle["life"][:] = 1.5
    got, expected = depth_case(host, pos_age, vel_life, size=rng.choice([0.3, 1.6]), size_random=0.5, seed=4)
    np.testing.assert_array_equal(got, expected)
    assert (got < FAR).sum() > 100 and (got == FAR).sum() > 100


@pytest.mark.parametrize("what, shutter, focus, speed", [
    ("streaks", (-0.1, 0.1), None, 40.0),  # 8 pixels, some over 16: the tile lists
    ("discs", None, (3.0, 1.0), 0.0),  # circles of 0 to 2.6 px: the splat's
    ("bokeh discs", None, (12.0, 1.0), 0.0),  # 6 to 10.5 px: bokeh discs, the wide ones through the tile lists
    ("streaked discs", (-0.1, 0.1), (12.0, 1.0), 40.0),
])
def test_footprints_match_the_reference(host, rng, what, shutter, focus, speed):
    pos_age, vel_life = deep_particles(rng, 200, WIDE_W, WIDE_H, speed)
    camera = deep_camera(WIDE_W, WIDE_H, shutter, focus)
    got, expected = depth_case(host, pos_age, vel_life, camera, DEEP_VIEW, size=0.2)
    np.testing.assert_array_equal(got, expected)
    assert (got < FAR).sum() > 300


@pytest.mark.parametrize("particle_type, blend_mode, focus, image", [
    ("SPRITE", "ADD", None, ""), ("POINT", "ALPHA", None, ""),
    ("POINT", "ALPHA", (12.0, 1.0), ""), ("SPRITE", "ADD", (12.0, 1.0), ""),  # depth of field: widened sprites
    ("SPRITE", "ADD", (12.0, 1.0), "puff"), ("POINT", "ALPHA", (12.0, 1.0), "puff"),
    ("SPRITE", "ADD", None, "puff"), ("POINT", "ALPHA", None, "puff"),  # a sprite image's square: to its corners
])
def test_sprites_mark_their_radius(host, rng, particle_type, blend_mode, focus, image):
    pos_age, vel_life = deep_particles(rng, 100, WIDE_W, WIDE_H, 20.0)
    camera = deep_camera(WIDE_W, WIDE_H, (-0.1, 0.1), focus)
    got, expected = depth_case(host, pos_age, vel_life, camera, DEEP_VIEW, size=6.0, size_random=0.8,
                               particle_type=particle_type, blend_mode=blend_mode, sprite_image=image)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("shutter, focus", [(None, None), ((-0.1, 0.1), None), (None, (12.0, 1.0))])
def test_stretched_quads_mark_back_to_their_tails(host, rng, shutter, focus):
    """A Stretched quad is drawn from its head back to where it was ``stretch`` seconds ago: every pixel of that
    tail carries its depth, as the reference marks it."""
    pos_age, vel_life = deep_particles(rng, 100, WIDE_W, WIDE_H, 20.0)
    camera = deep_camera(WIDE_W, WIDE_H, shutter, focus)
    got, expected = depth_case(host, pos_age, vel_life, camera, DEEP_VIEW, size=0.5, particle_type="STRETCHED",
                               stretch=0.5, blend_mode="ADD")
    np.testing.assert_array_equal(got, expected)
    one = np.array([[WIDE_W / 2 + 0.25, WIDE_H / 2 + 0.25, 0.0, 0.5]], np.float32)
    moving = np.array([[40.0, 0.0, 0.0, 1.0]], np.float32)  # 20 pixels of tail to the left of the head
    got, _ = depth_case(host, one, moving, deep_camera(WIDE_W, WIDE_H), DEEP_VIEW, size=0.5,
                        particle_type="STRETCHED", stretch=0.5, blend_mode="ADD")
    row = got[WIDE_H // 2]
    assert (row[WIDE_W // 2 - 19:WIDE_W // 2 + 1] < FAR).all(), "the whole tail is marked"
    assert (row[WIDE_W // 2 + 4:] == FAR).all(), "nothing ahead of the head"


def test_nearest_of_two_and_the_point_block(host):
    pos_age = np.array([[20.5, 12.5, -5.0, 0.1], [20.5, 12.5, -3.0, 0.1], [5.5, 5.5, -2.0, 0.1]], np.float32)
    vel_life = np.array([[0, 0, 0, 1.0]] * 3, np.float32)
    got, expected = depth_case(host, pos_age, vel_life, size=40.0)  # a point's size widens no footprint
    np.testing.assert_array_equal(got, expected)
    assert got[12, 20] == 3.0, "the nearer of two particles on one pixel"
    marked = got < FAR
    assert marked[11:14, 19:22].all() and marked[4:7, 4:7].all(), "the 3x3 block around a centered point"
    assert marked.sum() == 2 * 9


def test_particles_without_light_mark_nothing(host):
    pos_age = np.array([[10.5, 10.5, -4.0, 0.1]], np.float32)
    vel_life = np.array([[0, 0, 0, 1.0]], np.float32)
    got, _ = depth_case(host, pos_age, vel_life, emission_strength=0.0)
    assert (got == FAR).all()


def lit_and_depth(host, camera, pos_age, vel_life, **values):
    """(the frame's light, the particle depth) of one effect through the product's compositor (antialiased)."""
    settings = effect_settings({"count": len(pos_age), "emission_strength": 1.0, **values})
    system = ParticleSystem(host, settings)
    system.write_state(pos_age, vel_life)
    compositor = Compositor(FrameResources(host, camera.width, camera.height), render_settings())
    compositor.antialias = True
    compositor.add(system, camera)
    compositor.resolve()
    depth = ParticleDepth(host, camera.width, camera.height)
    depth.clear()
    depth.add(system, camera, DEEP_VIEW, compositor.resources.look_texture(system))
    return compositor.read_frame(), depth.read()


@pytest.mark.parametrize("what, shutter, focus, speed", [
    ("2x2", None, None, 0.0), ("streaks", (-0.2, 0.2), None, 60.0), ("discs", None, (3.0, 1.0), 0.0),
    ("bokeh discs", None, (12.0, 1.0), 0.0), ("streaked bokeh", (-0.2, 0.2), (12.0, 1.0), 60.0),
])
def test_every_lit_pixel_has_a_depth(host, rng, what, shutter, focus, speed):
    """Wherever the light lands, its particle's depth is marked: the compositor compares something."""
    pos_age, vel_life = deep_particles(rng, 150, WIDE_W, WIDE_H, speed)
    particle = PARTICLE.read_images(pos_age, vel_life)
    particle["age"][:] = 0.5
    frame, depth = lit_and_depth(host, deep_camera(WIDE_W, WIDE_H, shutter, focus), pos_age, vel_life, size=0.2)
    lit = frame[..., :3].max(axis=-1) > 0
    assert lit.sum() > 200
    assert (depth[lit] < FAR).all(), f"{(depth[lit] >= FAR).sum()} lit pixels without a depth"


@pytest.mark.parametrize("what, shutter, focus, velocity", [
    ("a streak", (-0.5, 0.5), None, 60.0), ("a bokeh disc", None, (12.0, 1.0), 0.0),
])
def test_an_object_in_front_of_half_a_footprint_hides_that_half(host, what, shutter, focus, velocity):
    """The compositor's rule (compositor_nodes.py) with a hand-made render depth: a wall at depth 2 over the
    right half, nothing (Blender's 1e10) on the left; one particle at depth 4 (z 12) in the middle."""
    camera = deep_camera(WIDE_W, WIDE_H, shutter, focus)
    pos_age = np.array([[WIDE_W / 2 + 0.25, WIDE_H / 2 + 0.25, 12.0, 0.5]], np.float32)
    vel_life = np.array([[velocity, 0.0, 0.0, 1.0]], np.float32)
    light, depth = lit_and_depth(host, camera, pos_age, vel_life, size=0.2)
    render_depth = np.full((WIDE_H, WIDE_W), 1e10, np.float32)
    render_depth[:, WIDE_W // 2:] = 2.0
    in_front = (depth < render_depth)[..., None]
    shown = in_front * light[..., :3]
    left, right = slice(None, WIDE_W // 2), slice(WIDE_W // 2, None)
    lit = light[..., :3].max(axis=-1) > 0
    assert lit[:, left].sum() > 10 and lit[:, right].sum() > 10, "the footprint straddles the wall's edge"
    np.testing.assert_array_equal(shown[:, left], light[:, left, :3], "all of the left half shows")
    assert not shown[:, right].any(), "the wall hides the right half"
