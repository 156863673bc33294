"""Particle shadows on the scene's surfaces (engine/light/surface_shadow.py): the kernel against the numpy
reference of the same algorithm, a slab of known transmittance over a ground plane (the darkened pixels and
their factor), perspective and orthographic cameras, a camera inside the shadow volume, and when nothing is
drawn (no caster, Shadows on Scene off, no scene depth)."""

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

from addon.engine.light import shadow_volume
from addon.engine.light.surface_shadow import SurfaceShadow
from addon.engine.look.lighting import Light, SceneLights
from addon.engine.look.look import look_table
from addon.engine.reference.light import shadow_volume as volume_ref
from addon.engine.reference.light import surface_shadow as ref
from tests.engine.light.test_shadow_volume import lit_system

W, H = 96, 64
SUN = Light("SUN", (1.0, 1.0, 1.0), 3.0, (0.0, 0.0, 10.0), direction=tuple(np.array([0.3, 0.2, -1.0]) / np.linalg.norm([0.3, 0.2, -1.0])),
            name="Sun", shadow_slot=0)
LAMP = Light("POINT", (1.0, 0.9, 0.8), 400.0, (-2.0, 1.0, 3.0), radius=0.1, name="Lamp", shadow_slot=1)
FILL = Light("POINT", (0.5, 0.5, 1.0), 100.0, (3.0, -2.0, 2.0), name="Fill")  # no shadow slot: lights unshadowed
BOX = (np.array([1.2, -0.6, 0.0]), np.array([1.8, 0.4, 0.9]))  # a block on the ground beside the slab


def look_at(eye, target):
    forward = np.asarray(target, np.float64) - eye
    forward /= np.linalg.norm(forward)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    view = np.identity(4)
    view[:3, :3] = (right, np.cross(right, forward), -forward)
    view[:3, 3] = -view[:3, :3] @ eye
    return view


def camera(eye, target, ortho=None, near=0.05, far=40.0):
    """World to clip (OpenGL) of a camera at ``eye`` looking at ``target``: perspective (50 degrees up and down),
    or orthographic ``ortho`` units high."""
    aspect = W / H
    if ortho is None:
        f = 1 / np.tan(np.radians(25))
        projection = np.array([[f / aspect, 0, 0, 0], [0, f, 0, 0],
                               [0, 0, (far + near) / (near - far), 2 * far * near / (near - far)], [0, 0, -1, 0]])
    else:
        projection = np.diag([2 / (ortho * aspect), 2 / ortho, -2 / (far - near), 1.0])
        projection[2, 3] = -(far + near) / (far - near)
    return projection @ look_at(np.asarray(eye, np.float64), target)


def scene_depth(view_proj):
    """Window depth (rows bottom first) of the ground plane z = 0 and BOX, 1 where the ray hits neither."""
    inverse = np.linalg.inv(view_proj)
    y, x = np.indices((H, W))
    near = ref.unproject(inverse, W, H, x, y, np.zeros((H, W)))
    far = ref.unproject(inverse, W, H, x, y, np.ones((H, W)))
    direction = far - near
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(direction[..., 2] < 0, -near[..., 2] / direction[..., 2], np.inf)
        low, high = (BOX[0] - near) / direction, (BOX[1] - near) / direction
        enter = np.nan_to_num(np.minimum(low, high), nan=-np.inf).max(axis=-1)
        leave = np.nan_to_num(np.maximum(low, high), nan=np.inf).min(axis=-1)
    t = np.where((enter <= leave) & (enter >= 0) & (enter < t), enter, t)
    t = np.where((t >= 0) & (t <= 1), t, np.inf)
    hit = near + direction * np.where(np.isfinite(t), t, 0)[..., None]
    clip = np.concatenate([hit, np.ones((H, W, 1))], axis=-1) @ view_proj.T
    depth = clip[..., 2] / clip[..., 3] * 0.5 + 0.5
    return np.where(np.isfinite(t), depth, 1.0).astype(np.float32)


def slab(host, rng, density=2.0, n=4000):
    """A lit slab of particles over the ground: 2 x 2 wide, between z = 1 and 1.3."""
    centers = np.column_stack([rng.uniform(-1, 1, n), rng.uniform(-1, 1, n), rng.uniform(1.0, 1.3, n)])
    system, look = lit_system(host, centers.astype(np.float32), 0.08, density)
    system.settings = dataclasses.replace(system.settings, lighting="LIT")
    return system, look


def drawn(host, systems, lights, view_proj, occluded=False, resolution=32, depth=None):
    """The SurfaceShadow of ``systems`` seen through ``view_proj``, its volume and the depth it read."""
    shadows = shadow_volume.ShadowVolume(host, resolution)
    shadows.build(systems, lights.lights)
    depth = scene_depth(view_proj) if depth is None else depth
    looks = dict((id(system), look) for system, look in systems)
    resources = SimpleNamespace(depth=SimpleNamespace(depth=host.texture("scene_depth", W, H, "DEPTH32F", depth)),
                                look_texture=lambda system: looks[id(system)])
    surface = SurfaceShadow(host, W, H)
    surface.draw([system for system, _ in systems], lights, SimpleNamespace(view_proj=view_proj), resources, shadows,
                 occluded)
    return surface, shadows, depth


def reference(host, surface, shadows, depth, lights, view_proj):
    volume = surface._volume or shadows
    return ref.darkening(depth, np.linalg.inv(view_proj), lights, host.read(volume.transmittance),
                         host.read(volume.grid).ravel())


EYES = {"perspective": ((4.0, -5.0, 3.5), None), "orthographic": ((4.0, -5.0, 3.5), 5.0),
        "inside the volume": ((0.2, -0.3, 1.15), None)}


@pytest.mark.parametrize("view", EYES)
def test_kernel_matches_the_reference(host, rng, view):
    """A sun and a point light casting particle shadows, a light without a slot and a World: every pixel
    (ground, block, sky; edges included) against numpy, from outside, orthographic and inside the volume."""
    eye, ortho = EYES[view]
    view_proj = camera(eye, (0.0, 0.0, 0.0) if view != "inside the volume" else (0.3, 0.2, 0.0), ortho)
    lights = SceneLights((SUN, LAMP, FILL), ambient=(0.05, 0.05, 0.06))
    surface, shadows, depth = drawn(host, [slab(host, rng)], lights, view_proj)
    assert surface.drawn
    gpu = host.read(surface.image).reshape(H, W)
    expected = reference(host, surface, shadows, depth, lights, view_proj)
    assert np.isfinite(gpu).all()
    assert (gpu[depth >= 1.0] == 0.0).all(), "no surface, no shadow"
    assert expected.max() > 0.2, "the slab darkens what lies under it"
    # half floats and the texture unit's 8-bit filtering weights; a pixel whose nearer neighbour is a tie may
    # take the other side's normal: at most a few edge pixels
    close = np.abs(gpu - expected) <= 4e-3
    assert close.mean() > 0.995, np.abs(gpu - expected).max()


def test_slab_of_known_transmittance_darkens_the_ground_beneath_by_it(host, rng):
    """A lone sun, a black World: the ground's factor is the slab's transmittance toward the sun (the exact
    particle model) beneath it and across its soft edges (no bands from the coarse grid), and the ground beside
    the shadow keeps its color."""
    lights = SceneLights((SUN,))
    system = slab(host, rng, density=0.01, n=20_000)  # smooth enough for a 64-voxel grid to follow
    middle = np.array([0.35, 0.23])  # the slab's middle seen from the ground toward the sun
    view_proj = camera((*middle, 3.0), (*(middle + (0, 0.01)), 0.0))  # straight down: every pixel is ground
    surface, shadows, depth = drawn(host, [system], lights, view_proj, resolution=64)
    darkening = host.read(surface.image).reshape(H, W)
    y, x = np.indices((H, W))
    ground = ref.unproject(np.linalg.inv(view_proj), W, H, x, y, depth.astype(np.float64))
    pos_age, vel_life = system[0].read_state()
    centers, radii, _ = volume_ref.particles(pos_age, vel_life, system[0].settings, look_table(system[0].settings))
    rows = shadow_volume.slot_lights([SUN])
    scale = shadow_volume.extinction_scale(system[0].settings)
    row = ground[H // 2]
    exact = volume_ref.exact_transmittance(centers, radii, scale, row, rows)[:, 0]
    beneath = np.abs(row[:, 0] - middle[0]) < 0.5
    assert 0.05 < exact[beneath].mean() < 0.8, "a slab that lets some light through"
    assert abs((1 - darkening[H // 2, beneath]).mean() - exact[beneath].mean()) < 0.01
    np.testing.assert_allclose(1 - darkening[H // 2], exact, atol=0.08)  # beneath, the edges (the filter widens them a little) and beside
    assert ((darkening[H // 2] > 0.05) & (darkening[H // 2] < 0.5)).sum() >= 2, "a soft edge, pixels wide"
    beside = np.abs(ground[..., 0] - middle[0]) > 1.3
    assert beside.any() and darkening[beside].max() < 1e-3, darkening[beside].max()


def test_shadows_on_scene_off_no_caster_or_no_depth_draws_nothing(host, rng):
    lights = SceneLights((SUN,))
    view_proj = camera((4.0, -5.0, 3.5), (0.0, 0.0, 0.0))
    system, look = slab(host, rng)
    system.settings = dataclasses.replace(system.settings, shadows_on_scene=False)
    surface, _, _ = drawn(host, [(system, look)], lights, view_proj)
    assert not surface.drawn
    surface, _, _ = drawn(host, [slab(host, rng)], SceneLights((FILL,)), view_proj)
    assert not surface.drawn, "no light casts particle shadows"
    shadows = shadow_volume.ShadowVolume(host, 16)
    surface = SurfaceShadow(host, W, H)
    surface.draw([slab(host, rng)[0]], lights, SimpleNamespace(view_proj=view_proj), SimpleNamespace(depth=None),
                 shadows, False)
    assert not surface.drawn, "no scene depth"


def test_only_the_effects_with_shadows_on_scene_cast_and_a_volume_of_their_own_matches(host, rng):
    """Beside an effect with Shadows on Scene off the casters get a volume of their own; with the same casters
    it gives the frame volume's darkening exactly (the path taken when scene occluders shadow the frame's)."""
    lights = SceneLights((SUN,), ambient=(0.1, 0.1, 0.1))
    view_proj = camera((4.0, -5.0, 3.5), (0.0, 0.0, 0.0))
    caster = slab(host, rng)
    shared, _, _ = drawn(host, [caster], lights, view_proj)
    own, _, _ = drawn(host, [caster], lights, view_proj, occluded=True)
    assert own._volume is not None and shared._volume is None
    np.testing.assert_array_equal(host.read(own.image), host.read(shared.image))
    other, look = slab(host, np.random.default_rng(7))
    other.settings = dataclasses.replace(other.settings, shadows_on_scene=False)
    both, _, _ = drawn(host, [caster, (other, look)], lights, view_proj)
    np.testing.assert_array_equal(host.read(both.image), host.read(shared.image))
