"""Reynolds boids: the reference's three rules, seeking and avoiding by hand, the GPU steering against the reference,
and a flock forming on the GPU."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from addon.engine.reference.simulate import fluids as ref
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import effect_settings
from addon.engine.simulate.effectors import Collider, collider_rows
from addon.engine.simulate.flocking import constants_of, flock_constants
from addon.engine.simulate.interactions import Interactions
from tests.engine.simulate.test_fluids import plane
from tests.engine.simulate.test_neighbours import state

F = np.float32


def test_the_three_rules_see_only_neighbours_within_the_view_radius_and_cone():
    c = flock_constants(1.0, math.radians(180))  # half the sphere: what is ahead
    p = F([[0, 0, 0], [0.5, 0.0, 0], [0.3, 0.4, 0], [-0.5, 0, 0], [0.0, 0.0, 2.0]])  # ahead, ahead, behind, far
    v = F([[1, 0, 0], [0, 2, 0], [0, 0, 2], [5, 5, 5], [9, 9, 9]])
    separation, alignment, cohesion, seen = ref.flock_rules(p, v, ref.neighbours(p, 1.0), c)
    assert seen[0] == 2
    want = -(F([0.5, 0, 0]) / 0.25 + F([0.3, 0.4, 0]) / 0.25)
    np.testing.assert_allclose(separation[0], want, rtol=1e-6)
    np.testing.assert_allclose(alignment[0], [0, 1, 1], rtol=1e-6)
    np.testing.assert_allclose(cohesion[0], [0.4, 0.2, 0], rtol=1e-6)
    assert seen[4] == 0 and not alignment[4].any()  # alone: no rule
    still = ref.flock_rules(p, np.zeros_like(v), ref.neighbours(p, 1.0), c)[3]
    assert still[0] == 3  # a bird at rest looks all around


def test_steering_is_desired_velocity_minus_velocity_clamped_and_seeks_the_target():
    c = flock_constants(1.0, 2 * math.pi, separation=0, alignment=0, cohesion=0, seek=1.0, max_speed=4.0,
                        max_force=100.0)
    p, v = F([[0, 0, 0]]), F([[0, 1, 0]])
    force = ref.flock_steering(p, v, ref.neighbours(p, 1.0), c, target=F([10, 0, 0]))
    np.testing.assert_allclose(force[0], [4, -1, 0], rtol=1e-6)
    weak = flock_constants(1.0, 2 * math.pi, seek=1.0, max_force=2.0)
    force = ref.flock_steering(p, v, ref.neighbours(p, 1.0), weak, target=F([10, 0, 0]))
    assert np.linalg.norm(force[0]) == pytest.approx(2.0)


def test_a_bird_near_a_wall_steers_away_from_it():
    c = flock_constants(1.0, 2 * math.pi, avoid=1.0, avoid_distance=1.0, max_force=100.0)
    rows = collider_rows([plane((0, 0, 0), (0, 0, 1))], 0, 1, 1 / 24)
    p, v = F([[0, 0, 0.3], [0, 0, 3.0]]), F([[1, 0, 0], [1, 0, 0]])
    away = ref.collider_avoidance(ref.collider_surfaces(rows, 1, p), c, 2)
    assert away[0, 2] > 0 and not away[1].any()
    force = ref.flock_steering(p, v, ref.neighbours(p, 1.0), c, away=away)
    assert force[0, 2] > 0 and not force[1].any()


def flock(host, positions, velocities, colliders=(), target=None, **values):
    settings = effect_settings({"count": len(positions), "interaction": "FLOCKING", "interaction_radius": 0.5,
                                **values})
    pos_tex, _, pos_age, vel_life, width, rows = state(host, positions)
    PARTICLE.read_image("vel_life", vel_life)["velocity"][:] = velocities
    padded = np.zeros((width * rows, 4), F)
    padded[: len(positions)] = vel_life
    vel_tex = host.texture("vel_life", width, rows, "RGBA32F", padded.reshape(rows, width, 4))
    system = SimpleNamespace(settings=settings, pos_age=pos_tex, vel_life=vel_tex, flock_target=target,
                             interactions=Interactions(host, settings, width, rows))
    textures = {"sdf_atlas": host.volume("sdf_atlas", np.zeros((1, 1, 1), F))}
    constants = {"count": len(positions), "collider_count": len(colliders),
                 "colliders": collider_rows(list(colliders), 0, 1, 1 / 24)}

    def step(h):
        system.interactions.step(system, h, textures, constants)
        n = len(positions)
        return host.read(pos_tex).reshape(-1, 4)[:n, :3].copy(), host.read(vel_tex).reshape(-1, 4)[:n, :3].copy()

    return settings, step


def test_a_flocking_step_on_the_gpu_matches_the_reference_with_a_target_and_colliders(host, rng):
    positions = rng.uniform(-1, 1, (800, 3)).astype(F)
    velocities = rng.normal(0, 2, (800, 3)).astype(F)
    sphere = np.identity(4)
    colliders = [plane((0, 0, -1.2), (0, 0, 1)), Collider("SPHERE", sphere, half_size=(0.3,) * 3)]
    settings, step = flock(host, positions, velocities, colliders, target=(3.0, 0.0, 1.0), flock_seek=0.7)
    got_p, got_v = step(1 / 24)
    rows = collider_rows(colliders, 0, 1, 1 / 24)
    want_p, want_v = ref.flock_step(positions, velocities, constants_of(settings), 1 / 24, F([3, 0, 1]),
                                    lambda p: ref.collider_surfaces(rows, 2, p))
    assert np.abs(want_v - velocities).max() > 0.1
    np.testing.assert_allclose(got_v, want_v, atol=2e-4)
    np.testing.assert_allclose(got_p, want_p, atol=2e-5)


def test_birds_that_start_every_which_way_fly_as_one_flock_and_keep_apart(host, rng):
    positions = rng.uniform(-0.6, 0.6, (1500, 3)).astype(F)
    velocities = rng.normal(0, 3, (1500, 3)).astype(F)
    _, step = flock(host, positions, velocities, flock_view_angle=2 * math.pi)
    order = []
    for _ in range(48):
        p, v = step(1 / 24)
        heading = v / np.linalg.norm(v, axis=1, keepdims=True)
        order.append(np.linalg.norm(heading.mean(axis=0)))
    assert order[0] < 0.3 < 0.8 < order[-1]  # the mean heading of unit headings: 0 scattered, 1 aligned
    d = np.linalg.norm(p[:200, None] - p[None, :], axis=2)
    np.fill_diagonal(d, np.inf)
    assert np.median(d.min(axis=1)) > 0.02  # separation: no bird sits on another
