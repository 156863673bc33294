"""CSG point clouds on the GPU against the numpy reference, and bad input."""

import numpy as np
import pytest

from addon.engine.draw.frame_resources import FrameResources
from addon.engine.reference.simulate import csg as ref_csg
from addon.engine.seam.records import PARTICLE
from addon.engine.simulate import csg


def random_stack(rng, n):
    stack = []
    for k in range(n):
        center = tuple(rng.uniform(-1, 1, 3))
        mode = "ADD" if k == 0 or rng.random() < 0.6 else "SUBTRACT"
        color = tuple(rng.random(3))
        if rng.random() < 0.5:
            stack.append(csg.sphere(center, rng.uniform(0.3, 1.0), mode, color))
        else:
            stack.append(csg.box(center, tuple(rng.uniform(0.2, 0.8, 3)), mode, color))
    return stack


def assert_matches(cloud, pos, attr):
    got_pos, got_attr = cloud.read()
    assert len(got_pos) == len(pos)
    np.testing.assert_array_equal(got_pos[:, 3], pos[:, 3])  # same samples, same order
    np.testing.assert_allclose(got_pos, pos, atol=2e-6)
    np.testing.assert_allclose(got_attr[:, :3], attr[:, :3], atol=2e-6)
    np.testing.assert_array_equal(got_attr[:, 3], attr[:, 3])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_incremental_stack_matches_reference(host, rng, seed):
    """Primitives appended one by one, then two at once: modes A, B.1 and B.2 each step."""
    stack = random_stack(rng, 8)
    cloud = csg.PointCloud(host, 40_000, 3000, seed)
    pos, attr = np.zeros((0, 4), np.float32), np.zeros((0, 4), np.float32)
    for last, first in ((1, 0), (2, 1), (3, 2), (4, 3), (5, 4), (6, 5), (8, 6)):
        cloud.update(stack[:last])
        pos, attr = ref_csg.add(stack, first, last, 3000, seed, pos, attr)
        assert_matches(cloud, pos, attr)
    assert 0 < len(pos) < 8 * 3000


def test_change_rebuilds_from_scratch(host, rng):
    stack = random_stack(rng, 5)
    cloud = csg.PointCloud(host, 40_000, 2000, 5)
    cloud.update(stack)
    moved = [*stack[:2], csg.sphere((0.2, 0.1, 0.0), 0.7, "SUBTRACT"), *stack[3:]]
    cloud.update(moved)
    pos, attr = ref_csg.add(moved, 0, 5, 2000, 5, np.zeros((0, 4), np.float32), np.zeros((0, 4), np.float32))
    assert_matches(cloud, pos, attr)


def test_samples_sit_on_the_solid_surface(host):
    """A sphere minus a box: kept samples are on the sphere outside the box or on the box inside the sphere."""
    stack = [csg.sphere((0, 0, 0), 1.0, color=(1, 0, 0)), csg.box((1, 0, 0), (0.5, 0.5, 0.5), "SUBTRACT")]
    cloud = csg.PointCloud(host, 10_000, 4000)
    cloud.update(stack)
    pos, attr = cloud.read()
    on_sphere = pos[:, 3] == 0
    assert on_sphere.any() and (~on_sphere).any()
    np.testing.assert_allclose(np.linalg.norm(pos[on_sphere, :3], axis=1), 1.0, atol=1e-5)
    assert (np.abs(pos[on_sphere, :3] - (1, 0, 0)) >= 0.5 - 1e-6).any(axis=1).all()
    assert (np.linalg.norm(pos[~on_sphere, :3], axis=1) < 1.0).all()
    np.testing.assert_allclose(csg.unpack_colors(attr[on_sphere]), [[1, 0, 0]] * on_sphere.sum())


def test_subtractive_first_is_a_warning_and_adds_nothing(host):
    cloud = csg.PointCloud(host, 1000, 100)
    cloud.update([csg.sphere((0, 0, 0), 1.0, "SUBTRACT", name="Hole")])
    assert "Hole subtracts from nothing" in cloud.warnings[0]
    assert cloud.read_count() == 0


@pytest.mark.parametrize(
    "stack, message",
    [
        ([csg.sphere((0, 0, 0), 0.0, name="Ball")], "Ball: size must be positive"),
        ([csg.sphere((0, 0, 0), 1.0), csg.box((0, 0, 0), (1, -1, 1))], "primitive 1: size must be positive"),
        ([csg.sphere((0, 0, 0), 1.0)] * (csg.MAX_PRIMITIVES + 1), "budget"),
        ([csg.sphere((0, 0, float("nan")), 1.0)], "finite"),
    ],
)
def test_bad_primitives_are_refused_and_change_nothing(host, stack, message):
    cloud = csg.PointCloud(host, 1000, 10)
    good = [csg.sphere((0, 0, 0), 1.0)]
    cloud.update(good)
    with pytest.raises(csg.CSGError, match=message):
        cloud.update(stack)
    assert cloud.primitives == good and cloud.read_count() == 10


def test_sample_budget_beyond_capacity_or_texture_limits(host):
    with pytest.raises(csg.CSGError, match="texture limits"):
        csg.PointCloud(host, csg.sample_capacity_limit(host.max_texture_size) + 1, 10)
    cloud = csg.PointCloud(host, 1000, 400)
    cloud.update([csg.sphere((0, 0, 0), 1.0), csg.sphere((3, 0, 0), 1.0)])
    with pytest.raises(csg.CSGError, match="exceed the capacity"):
        cloud.update([csg.sphere((0, 0, 0), 1.0), csg.sphere((3, 0, 0), 1.0), csg.sphere((6, 0, 0), 1.0)])
    assert cloud.read_count() == 800


def test_cloud_draws_through_the_splat(host):
    """Kept samples become splat particles; slots past the count (after a rebuild) stay dark."""

    from addon.engine.draw import compositing
    from addon.engine.settings.settings import effect_settings, render_settings

    cloud = csg.PointCloud(host, 20_000, 3000)
    cloud.update([csg.sphere((32, 16, 0), 10.0), csg.sphere((40, 16, 0), 6.0, "SUBTRACT")])
    stack = [csg.sphere((32, 16, 0), 5.0), csg.sphere((36, 16, 0), 3.0)]
    cloud.update(stack[:1])  # a rebuild: fewer samples than before
    cloud.update(stack)  # appended: some of the 6000 samples culled
    points = csg.CloudParticles(cloud, effect_settings({"size": 1.0, "color_start": (1, 1, 1), "color_end": (0, 0, 1)}))
    points.update(time=0.5, noise_amount=0.01, noise_speed=2.0)
    particle = PARTICLE.read_images(*(host.read(image).reshape(-1, 4) for image in (points.pos_age, points.vel_life)))
    life = particle["life"]
    n = cloud.read_count()
    assert 3000 < n < cloud.bound == 6000 and (life[:n] == 1).all() and not life[n:cloud.bound].any()
    assert ((particle["age"][:n] >= 0) & (particle["age"][:n] < 1)).all()
    first = host.read(cloud.samples["pos"]).reshape(-1, 4)[:n, 3] == 0
    radius = np.linalg.norm(particle["position"][:n][first] - (32, 16, 0), axis=1)
    assert np.abs(radius - 5.0).max() <= 0.0101  # noise moves samples along their normal
    compositor = compositing.Compositor(FrameResources(host, 64, 32), render_settings({"emax": 8.0}))
    compositor.splat(points, compositing.Camera.pixel_grid(64, 32))
    hi = compositor.read_accum()[0]
    ys, xs = np.nonzero(hi)
    assert len(xs) > 50 and 26 <= xs.min() and xs.max() <= 39 and np.abs(ys - 16).max() <= 6


@pytest.mark.parametrize("seed", range(6))
def test_reference_keeps_exactly_the_final_surface(seed):
    """The keep rules, checked against the meaning of CSG: a kept sample has the final solid
    just behind it and empty space just in front (along its normal), and appending
    primitives one at a time keeps the same samples as building the stack at once."""
    rng = np.random.default_rng(seed)
    stack = random_stack(rng, 7)
    empty = np.zeros((0, 4), np.float32)
    pos, attr = empty, empty
    for k in range(len(stack)):
        pos, attr = ref_csg.add(stack, k, k + 1, 2000, seed, pos, attr)
    at_once, _ = ref_csg.add(stack, 0, len(stack), 2000, seed, empty, empty)
    np.testing.assert_array_equal(np.unique(pos, axis=0), np.unique(at_once, axis=0))
    eps = 1e-3
    front = pos[:, :3] + eps * attr[:, :3]
    behind = pos[:, :3] - eps * attr[:, :3]
    # Samples near an edge or another surface may see either side within eps.
    clear = ~ref_csg.near_any_surface(stack, pos[:, :3], pos[:, 3].astype(int), 2 * eps)
    assert clear.mean() > 0.9 and len(pos) > 1000
    assert not ref_csg.inside_stack(stack, front[clear]).any()
    assert ref_csg.inside_stack(stack, behind[clear]).all()
