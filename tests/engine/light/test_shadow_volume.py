"""The shadow volume (engine/light/shadow_volume.py): its kernels against the numpy reference of the same algorithm,
the transmittance at each particle against the exact transmittance of the particle density model, and the edge
cases (no density, a light inside the cloud, determinism, no crawl as the cloud moves)."""

from types import SimpleNamespace

import numpy as np
import pytest

from addon.engine.light import shadow_volume
from addon.engine.look.look import LOOK_SIZE, look_table
from addon.engine.reference.light import shadow_volume as ref
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import effect_settings
from addon.engine.simulate import simulation

SUN = SimpleNamespace(type="SUN", direction=(0.3, -0.2, -1.0), position=(0.0, 0.0, 0.0), shadow_slot=0)
ABOVE = SimpleNamespace(type="POINT", direction=(0.0, 0.0, -1.0), position=(0.8, 0.4, 1.5), shadow_slot=1)


def lit_system(host, centers, radius, density, size_random=0.0, ages=None):
    """An effect whose particles sit at ``centers`` (world), alive, ``radius`` their size, and its look table."""
    n = len(centers)
    settings = effect_settings({"count": n, "size": radius, "size_end": 0.5 if ages is not None else 1.0,
                                "size_random": size_random, "lifetime": 10.0, "density": density})
    system = simulation.ParticleSystem(host, settings)
    pos_age = np.concatenate([centers, np.full((n, 1), 1.0) if ages is None else ages[:, None]], axis=1)
    vel_life = np.zeros((n, 4), np.float32)
    PARTICLE.read_image("vel_life", vel_life)["life"][:] = 10.0
    system.write_state(pos_age.astype(np.float32), vel_life)
    look = host.texture("look", LOOK_SIZE, 1, "RGBA32F", look_table(settings))
    return system, look


def built(host, systems, lights, resolution):
    volume = shadow_volume.ShadowVolume(host, resolution)
    volume.build(systems, lights)
    return volume


def test_kernels_match_the_reference(host, rng):
    """Bounds, placement, splat (sizes over life and random, large particles on coarser levels), blur, resolve, march
    toward a sun and a point light inside the cloud, and the include's lookup: GPU against numpy."""
    resolution = 32  # particles of up to 2.4 voxels' spread: a coarser level than the finest
    centers = rng.normal(0.0, 0.15, (600, 3)).astype(np.float32)
    caster = lit_system(host, centers, 0.6, 0.05, size_random=0.8, ages=rng.uniform(0, 10, 600).astype(np.float32))
    probes = rng.uniform(-0.8, 0.8, (50, 3)).astype(np.float32)
    receiver = lit_system(host, probes, 0.05, 0.0)  # lit, casts nothing: in the bounds only
    inside = SimpleNamespace(type="POINT", direction=(0, 0, -1), position=(0.05, 0.1, 0.0), shadow_slot=2)
    lights = [SUN, inside]
    volume = built(host, [caster, receiver], lights, resolution)

    system = caster[0]
    pos_age, vel_life = system.read_state()
    table = look_table(system.settings)
    c, r, slots = ref.particles(pos_age, vel_life, system.settings, table)
    lower, upper = ref.bounds(np.concatenate([c, probes]), np.concatenate([r, np.full(50, 0.05, np.float32)]))
    grid = ref.place(lower, upper, resolution)
    np.testing.assert_array_equal(host.read(volume.grid).ravel(), grid)

    sums = ref.splat(c, r, slots, 0.05, grid, resolution)
    assert len(sums) > 6 and sum(level.sum() for level in sums[4:]) > 0, "large particles reach coarser levels"
    gpu_sums = host.read(volume.density_sum)
    start = 0
    for level in sums:
        size = level.shape[0]
        np.testing.assert_array_equal(gpu_sums[start:start + size, :size, :size], level)
        start += size
    extinction = ref.resolve(ref.blur(sums), resolution)
    np.testing.assert_allclose(host.read(volume.extinction), extinction, rtol=1e-5, atol=1e-6)

    rows = shadow_volume.slot_lights(lights)
    transmittance = ref.march(extinction, grid, rows)
    gpu = host.read(volume.transmittance)
    assert np.isfinite(gpu).all()
    # half floats, and the texture unit's filtering weights (8 bits on NVIDIA: 3 of 16384 voxels 3.1e-3 off on an H100)
    np.testing.assert_allclose(gpu, transmittance, atol=4e-3)
    assert (gpu[..., [1, 3]] == 1.0).all() and gpu[..., 2].min() < 0.9  # slots 1 and 3 hold no light
    points = np.concatenate([c, probes, [[50.0, 0.0, 0.0]]])
    # the lookup filters in the texture unit too: on an H100 5 of 2604 points 3.4e-3 off
    np.testing.assert_allclose(volume.sample(points), ref.sample(transmittance, grid, points), atol=4e-3)


# Clouds of overlapping particles resolved by the grid (radius above two voxels), and the tolerance
# against their exact transmittance: 0.02 everywhere.
CLOUDS = {
    "dense": (lambda rng: rng.normal(0.0, 0.3, (4000, 3)), 0.15, 0.01, None),
    "sparse": (lambda rng: rng.uniform(-1.0, 1.0, (1000, 3)), 0.15, 0.02, None),
    "slab": (lambda rng: np.concatenate([rng.uniform(-1, 1, (10000, 2)), rng.uniform(0.3, 0.5, (10000, 1))], 1),
             0.15, 0.01, lambda rng: np.concatenate([rng.uniform(-0.5, 0.5, (200, 2)),
                                                     rng.uniform(-0.6, -0.2, (200, 1))], 1)),
}


@pytest.mark.parametrize("cloud", list(CLOUDS))
def test_transmittance_at_particles_against_the_exact_model(host, cloud):
    """shadow_transmittance at every particle (or at probes behind the slab) toward a sun and a point light
    against the optical depth through every particle's Gaussian, integrated exactly."""
    rng = np.random.default_rng(29)
    make, radius, density, make_probes = CLOUDS[cloud]
    centers = make(rng).astype(np.float32)
    systems = [lit_system(host, centers, radius, density)]
    probes = centers
    if make_probes is not None:
        probes = make_probes(rng).astype(np.float32)
        systems.append(lit_system(host, probes, radius, 0.0))
    volume = built(host, systems, [SUN, ABOVE], 64)
    probes = probes[:1000]  # every particle casts; the exact sum at a thousand of them keeps this fast
    got = volume.sample(probes)[:, :2]
    exact = ref.exact_transmittance(centers, np.full(len(centers), radius), density, probes,
                                    shadow_volume.slot_lights([SUN, ABOVE]))[:, :2]
    assert np.abs(got - exact).max() <= 0.02
    assert abs((got - exact).mean()) < 0.005


def test_zero_density_and_no_lights_leave_everything_lit(host, rng):
    centers = rng.normal(0.0, 0.3, (500, 3)).astype(np.float32)
    system = lit_system(host, centers, 0.1, 0.0)
    volume = built(host, [system], [SUN, ABOVE], 16)
    assert (host.read(volume.transmittance) == 1.0).all()
    assert (volume.sample(centers) == 1.0).all()
    dense = lit_system(host, centers, 0.1, 5.0)
    volume.build([dense], [])  # lighting on, no shadowed light: no grid
    assert (host.read(volume.grid) == 0.0).all() and (volume.sample(centers) == 1.0).all()


def test_light_inside_the_cloud(host, rng):
    """A point light at the center of a cloud: only what lies between shadows, never NaN."""
    centers = rng.normal(0.0, 0.3, (3000, 3)).astype(np.float32)
    light = SimpleNamespace(type="POINT", direction=(0, 0, -1), position=(0.0, 0.0, 0.0), shadow_slot=0)
    volume = built(host, [lit_system(host, centers, 0.15, 0.005)], [light], 32)
    points = np.array([[0.0, 0.0, 0.0], [0.3, 0.0, 0.0], [0.0, -0.6, 0.0], [0.0, 0.0, 1.2]], np.float32)
    at = volume.sample(points)[:, 0]
    exact = ref.exact_transmittance(centers, np.full(len(centers), 0.15), 0.005, points,
                                    shadow_volume.slot_lights([light]))[:, 0]
    assert np.isfinite(host.read(volume.transmittance)).all()
    np.testing.assert_allclose(at[1:], exact[1:], atol=0.03)
    # At the light itself the grid has the transmittance of about a voxel's distance (0.77 here), the model 1.
    assert 0.7 < at[0] <= 1.0 and at[0] > at[1]


def test_two_builds_are_byte_identical(host, rng):
    centers = rng.normal(0.0, 0.3, (3000, 3)).astype(np.float32)
    system = lit_system(host, centers, 0.1, 0.3, size_random=0.5)
    first = host.read(built(host, [system], [SUN, ABOVE], 32).transmittance)
    second = host.read(built(host, [system], [SUN, ABOVE], 32).transmittance)
    assert first.tobytes() == second.tobytes()


def test_no_crawl_as_the_cloud_moves(host, rng):
    """The cloud moved a tenth of a voxel at a time over two voxels: the lattice stays put (same voxel edge,
    corner moved by whole voxels), and the transmittance at each particle changes by as little at the steps
    where the grid's corner moves as at any other (no jump); measured: at most 0.026 a step, 0.055 in all (the
    grid's sub-voxel blur of particles smaller than a voxel)."""
    centers = rng.normal(0.0, 0.3, (3000, 3)).astype(np.float32)
    step = np.array([0.0125, 0.004, 0.0], np.float32)  # voxel 0.125 at 32 voxels across this cloud
    sampled, grids = [], []
    for k in range(21):
        moved = centers + k * step
        volume = built(host, [lit_system(host, moved, 0.15, 0.005)], [SUN], 32)
        grids.append(host.read(volume.grid).ravel())
        sampled.append(volume.sample(moved)[:, 0])
    grids = np.array(grids)
    assert (grids[:, 3] == grids[0, 3]).all()
    assert np.allclose(np.round(grids[:, :3] / grids[0, 3]), grids[:, :3] / grids[0, 3])
    assert len(np.unique(grids[:, 0])) > 1, "the corner moved along"
    largest = np.abs(np.diff(sampled, axis=0)).max(axis=1)
    assert largest.max() < 0.035 and largest.max() < 1.6 * np.median(largest)
    assert np.abs(np.array(sampled) - sampled[0]).max() < 0.08


def test_a_mesh_between_the_sun_and_the_cloud_shadows_it(host, rng):
    """A plane over half the cloud, the sun straight above: the particles under it get T ~ 0, the others ~ 1,
    those above the plane too (no particle density: the scene's shadow alone)."""
    from addon.scene.light_shadows import LightShadowMaps

    plane = (np.array([[-3, -3, 1], [0, -3, 1], [0, 3, 1], [-3, 3, 1]], np.float32), np.array([[0, 1, 2], [0, 2, 3]], np.int32))
    sun = SimpleNamespace(type="SUN", direction=(0.0, 0.0, -1.0), position=(0.0, 0.0, 0.0), shadow_slot=1)
    maps = LightShadowMaps(host, tile=256).draw([plane], np.identity(4)[None], [sun])
    centers = rng.uniform([-1, -0.5, -0.5], [1, 0.5, 0.5], (2000, 3)).astype(np.float32)
    centers[:200, 2] += 2.0  # above the plane
    volume = shadow_volume.ShadowVolume(host, 32)
    volume.build([lit_system(host, centers, 0.05, 0.0)], [sun], maps)
    t = volume.sample(centers)[:, 1]
    below = centers[:, 2] < 1
    assert (t[below & (centers[:, 0] < -0.15)] < 0.02).all() and (t[below & (centers[:, 0] > 0.15)] > 0.98).all()
    assert (t[~below] > 0.98).all()
    assert np.isfinite(t).all()
