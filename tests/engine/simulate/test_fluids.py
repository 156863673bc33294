"""Position Based Fluids: the numpy reference against the paper's formulas, the GPU step against the reference,
and fluid at rest in a container on the GPU (its density within 1% of rest for 500 steps)."""

from types import SimpleNamespace

import numpy as np
import pytest

from addon.engine.reference.simulate import fluids as ref
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import effect_settings
from addon.engine.simulate.effectors import Collider, collider_rows
from addon.engine.simulate.fluids import constants_of, fluid_constants, poly6, spiky_slope
from addon.engine.simulate.interactions import Interactions
from addon.engine.simulate.simulation import ParticleSystem
from addon.scene.renderer import SceneRenderer
from tests.conftest import add_effect
from tests.engine.simulate.test_neighbours import state
from tests.scene.test_sim_cache import split_bake_equals_whole

F = np.float32
SIZE, RADIUS = 0.05, 0.2  # spacing 0.1, h two spacings


def lattice(n: int, size: float = SIZE) -> np.ndarray:
    """An n x n x n block of particles at the rest spacing (2 x size), its corner at the origin."""
    g = np.stack(np.meshgrid(*[np.arange(n)] * 3, indexing="ij"), -1).reshape(-1, 3)
    return ((g + 0.5) * 2 * size).astype(F)


def plane(origin, normal) -> Collider:
    z = np.asarray(normal, float)
    x = np.cross(z, (0.3, 0.5, 0.8))
    x /= np.linalg.norm(x)
    m = np.identity(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = x, np.cross(z, x), z, origin
    return Collider("PLANE", m, half_size=(10, 10, 0), thickness=SIZE)


def container(width: float) -> list[Collider]:
    """A floor and four walls around [0, width]^2 (planes facing in)."""
    return [plane((0, 0, 0), (0, 0, 1)), plane((0, 0, 0), (1, 0, 0)), plane((width, 0, 0), (-1, 0, 0)),
            plane((0, 0, 0), (0, 1, 0)), plane((0, width, 0), (0, -1, 0))]


def test_the_rest_density_makes_a_lattice_at_the_rest_spacing_exactly_at_rest():
    c = fluid_constants(SIZE, RADIUS)
    p = lattice(7)
    table = ref.neighbours(p, RADIUS)
    density, lambdas = ref.fluid_lambda(p, table, c)
    centre = np.argmin(np.linalg.norm(p - p.mean(axis=0), axis=1))
    assert density[centre] == pytest.approx(c.rest_density, rel=1e-5)
    assert abs(lambdas[centre]) < 1e-6
    assert density.min() < 0.6 * c.rest_density  # a corner is sparse: the free surface does not pull (cohesion 0)
    assert lambdas.max() == 0


def test_one_pbf_iteration_of_a_small_cloud_matches_the_papers_formulas(rng):
    """Lambda and delta-p of each particle of a squeezed cloud, by the paper's sums in float64 pair by pair."""
    c = fluid_constants(SIZE, RADIUS, tension=0.05, cohesion=0.3)
    p = rng.uniform(0, 0.45, (100, 3)).astype(F)
    table = ref.neighbours(p, RADIUS)
    density, lambdas = ref.fluid_lambda(p, table, c)
    delta = ref.fluid_delta(p, lambdas, table, c)
    q = p.astype(float)
    for i in range(len(p)):
        near = [j for j in range(len(p)) if j != i and np.linalg.norm(q[i] - q[j]) < RADIUS]
        assert sorted(near) == sorted(table[i][table[i] >= 0])
        rho = poly6(0, RADIUS) + sum(poly6(np.linalg.norm(q[i] - q[j]), RADIUS) for j in near)

        def grad(j, i=i):
            d = q[i] - q[j]
            r = np.linalg.norm(d)
            return spiky_slope(r, RADIUS) * d / r / c.rest_density

        constraint = rho / c.rest_density - 1
        constraint *= 1 if constraint > 0 else c.cohesion
        lam = -constraint / (sum(grad(j) @ grad(j) for j in near) + np.sum(sum(grad(j) for j in near) ** 2)
                             + c.relaxation)
        assert density[i] == pytest.approx(rho, rel=1e-5)
        assert lambdas[i] == pytest.approx(lam, rel=1e-4, abs=1e-9)
    for i in range(len(p)):
        near = table[i][table[i] >= 0]
        want = np.zeros(3)
        for j in near:
            d = q[i] - q[j]
            r = np.linalg.norm(d)
            scorr = -c.scorr * (poly6(r, RADIUS) * c.scorr_inverse_w) ** 4
            want += (float(lambdas[i]) + float(lambdas[j]) + scorr) * spiky_slope(r, RADIUS) * d / r
        np.testing.assert_allclose(delta[i], want / c.rest_density, rtol=1e-3, atol=1e-7)


def test_a_squeezed_pair_is_pushed_apart_and_a_lone_particle_stays():
    c = fluid_constants(SIZE, RADIUS)
    p = np.concatenate([lattice(3), [[0.15, 0.15, 0.17]], [[5, 5, 5]]]).astype(F)  # one squeezed in, one alone
    table = ref.neighbours(p, RADIUS)
    density, lambdas = ref.fluid_lambda(p, table, c)
    delta = ref.fluid_delta(p, lambdas, table, c)
    assert lambdas[-2] < 0 and density[-2] > c.rest_density
    assert density[-1] == pytest.approx(poly6(0, RADIUS), rel=1e-6) and lambdas[-1] == 0 and not delta[-1].any()
    centre = 13  # the lattice's middle particle, just below the squeezed one
    assert delta[centre, 2] < 0 < delta[-2, 2]


def test_a_wall_makes_the_layer_resting_on_it_at_rest_and_pushes_a_particle_in_it_out():
    c = fluid_constants(SIZE, RADIUS)
    rows = collider_rows([plane((0, 0, 0), (0, 0, 1))], 0, 1, 1 / 24)
    p = lattice(9)
    p = p[p[:, 2] < 0.3]  # three layers on the floor, the first at SIZE
    surfaces = ref.collider_surfaces(rows, 1, p)
    walls = ref.wall_density([(d + F(SIZE), n) for d, n in surfaces], c, len(p))
    density, _ = ref.fluid_lambda(p, ref.neighbours(p, RADIUS), c, walls)
    middle = np.linalg.norm(p[:, :2] - 0.45, axis=1) < 0.01
    assert density[middle & (p[:, 2] < 0.1)][0] == pytest.approx(c.rest_density, rel=1e-4)
    sunk = ref.project(np.array([[0.4, 0.4, 0.01]], F), lambda q: ref.collider_surfaces(rows, 1, q))
    assert sunk[0, 2] == pytest.approx(SIZE)


def fluid_system(host, positions, velocities, colliders, **values):
    settings = effect_settings({"count": len(positions), "size": SIZE, "interaction": "FLUID",
                                "interaction_radius": RADIUS, **values})
    pos_tex, vel_tex, pos_age, vel_life, width, rows = state(host, positions)
    PARTICLE.read_image("vel_life", vel_life)["velocity"][:] = velocities
    padded = np.zeros((width * rows, 4), F)
    padded[: len(positions)] = vel_life
    vel_tex = host.texture("vel_life", width, rows, "RGBA32F", padded.reshape(rows, width, 4))
    system = SimpleNamespace(settings=settings, pos_age=pos_tex, vel_life=vel_tex,
                             interactions=Interactions(host, settings, width, rows))
    textures = {"sdf_atlas": host.volume("sdf_atlas", np.zeros((1, 1, 1), F))}
    constants = {"count": len(positions), "collider_count": len(colliders),
                 "colliders": collider_rows(colliders, 0, 1, 1 / 24)}

    def step(h):
        system.interactions.step(system, h, textures, constants)

    def read():
        n = len(positions)
        return (host.read(pos_tex).reshape(-1, 4)[:n, :3].copy(), host.read(vel_tex).reshape(-1, 4)[:n, :3].copy())

    return settings, step, read, system.interactions


SPHERE = np.identity(4)
SPHERE[:3, 3] = (0.2, 0.2, 0.05)
BOX = np.diag([1.0, 1.5, 1.0, 1.0])
BOX[:3, 3] = (0.05, 0.3, 0.25)


@pytest.mark.parametrize("values", [{}, {"fluid_vorticity": 0.5, "cohesion": 0.4, "fluid_tension": 0.1,
                                         "iterations": 3}])
def test_a_fluid_step_on_the_gpu_matches_the_reference_with_every_analytic_collider(host, rng, values):
    positions = (lattice(5) + rng.normal(0, 0.01, (125, 3))).astype(F)
    velocities = rng.normal(0, 0.5, (125, 3)).astype(F)
    colliders = [plane((0, 0, 0), (0, 0, 1)), Collider("SPHERE", SPHERE, half_size=(0.08,) * 3, thickness=SIZE),
                 Collider("BOX", BOX, half_size=(0.05, 0.05, 0.05), thickness=0.02)]
    settings, step, read, _ = fluid_system(host, positions, velocities, colliders, **values)
    h = 1 / 120
    step(h)
    got_p, got_v = read()
    rows = collider_rows(colliders, 0, 1, 1 / 24)
    want_p, want_v, _ = ref.fluid_solve(positions, velocities, constants_of(settings), h, settings.iterations,
                                        lambda p: ref.collider_surfaces(rows, len(colliders), p))
    assert np.abs(want_p - positions).max() > 1e-3  # the step moved them
    np.testing.assert_allclose(got_p, want_p, atol=2e-5)
    np.testing.assert_allclose(got_v, want_v, atol=5e-3)


def test_a_fluid_step_finds_its_neighbours_once_for_the_solver_and_the_velocity_passes(host, rng, monkeypatch):
    """Macklin and Müller's algorithm 1: one grid build a step (its keys and lists once), the velocity passes
    gathering over the lists the iterations used."""
    positions = (lattice(4) + rng.normal(0, 0.01, (64, 3))).astype(F)
    _, step, _, _ = fluid_system(host, positions, np.zeros_like(positions), [], fluid_vorticity=0.5)
    dispatched, dispatch = [], host.dispatch

    def counted(kernel, *arguments):
        dispatched.append(kernel.name)
        dispatch(kernel, *arguments)

    monkeypatch.setattr(host, "dispatch", counted)
    step(1 / 120)
    assert dispatched.count("grid_keys") == dispatched.count("grid_neighbours") == 1
    assert dispatched[-3:] == ["fluid_move", "fluid_vorticity", "fluid_viscosity"]


def test_a_fluid_of_one_particle_moves_on_its_own(host):
    positions = np.array([[0.3, 0.2, 0.5]], F)
    _, step, read, interactions = fluid_system(host, positions, np.array([[1.0, 0, 0]], F), [])
    step(1 / 60)
    got_p, got_v = read()
    np.testing.assert_allclose(got_p, positions, atol=1e-6)
    np.testing.assert_allclose(got_v, [[1.0, 0, 0]], atol=1e-5)
    assert interactions.read_overflow() == 0


def test_fluid_at_rest_in_a_container_keeps_its_density_within_one_percent_of_rest_for_500_steps(host):
    """The product's step (simulate: gravity and the container's planes; then the grid and the solver) on a block
    of 216 particles in a box its width; the density of the fluid below its top layer, every 50 steps."""
    positions, colliders = lattice(6), container(0.6)
    settings = effect_settings({"count": len(positions), "size": SIZE, "interaction": "FLUID",
                                "interaction_radius": RADIUS, "emission": "BURST", "lifetime": 1e4})
    system = ParticleSystem(host, settings)
    system.set_scene_inputs([], colliders)
    pos_age = np.concatenate([positions, np.zeros((len(positions), 1), F)], axis=1)
    vel_life = np.concatenate([np.zeros_like(positions), np.full((len(positions), 1), 1e4, F)], axis=1)
    system.write_state(pos_age, vel_life)
    c = constants_of(settings)
    rows = collider_rows(colliders, 0, 1, 1 / 24)
    for k in range(500):
        system.step(1 / 240, np.identity(4), np.identity(4))
        if (k + 1) % 50 == 0:
            p = PARTICLE.read_images(*system.read_state())["position"][: len(positions)]
            walls = ref.wall_density([(d + F(SIZE), n) for d, n in ref.collider_surfaces(rows, 5, p)], c, len(p))
            density, _ = ref.fluid_lambda(p, ref.neighbours(p, RADIUS), c, walls)
            below_top = p[:, 2] < p[:, 2].max() - RADIUS
            assert below_top.sum() > 80, k
            assert density[below_top].mean() == pytest.approx(c.rest_density, rel=0.01), k
            assert density.max() < 1.01 * c.rest_density, k
            assert p[:, 2].max() < 0.6 + RADIUS, k  # nothing thrown up


def test_two_runs_of_a_fluid_step_are_byte_identical(host, rng):
    positions = (lattice(5) + rng.normal(0, 0.02, (125, 3))).astype(F)
    velocities = rng.normal(0, 0.5, (125, 3)).astype(F)
    runs = []
    for _ in range(2):
        _, step, read, _ = fluid_system(host, positions, velocities, container(0.5), fluid_vorticity=0.3)
        for _ in range(3):
            step(1 / 120)
        runs.append(read())
    for a, b in zip(*runs):
        assert a.tobytes() == b.tobytes()


def test_changing_the_interaction_mid_shot_simulates_the_history_again(scene):
    """Frame 6 rendered, the effect turned into a fluid: frame 6 again is a fresh fluid's, nothing kept."""
    effect = add_effect(count=3000, size=0.02, interaction_radius=0.08, emitter_radius=0.3, velocity_random=0.2)
    renderer = SceneRenderer(scene, 64, 36)
    alone = renderer.render(6)
    simulation = renderer.simulation
    effect.interaction = "FLUID"
    fluid = renderer.render(6)
    assert renderer.simulation is not simulation
    assert not np.array_equal(alone, fluid)
    np.testing.assert_array_equal(fluid, SceneRenderer(scene, 64, 36).render(6))


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["water_splash", "murmuration"])
def test_a_fluid_and_a_flock_baked_in_two_ranges_from_checkpoints_equal_one_whole_bake(preset, tmp_path):
    whole, _ = split_bake_equals_whole(tmp_path, 40, preset=preset)
    assert len({a.read_bytes() for a in whole}) > 30, "the particles move"
