"""Reference of the fluid and flocking passes: one PBF iteration (density and lambda, then delta-p), vorticity,
XSPH viscosity with vorticity confinement, and the boids' steering, in float32 and in the kernels' neighbour order.

Every pass gathers: particle i sums over its own neighbours in a fixed order (the grid's: reference/simulate/
neighbours.py), at most ``max_neighbours`` of them, itself left out.
``neighbours`` gives that order (the grid's reference) as an (n, k) table padded with -1; each sum below adds one
column at a time, so each particle's float32 sum is taken in the same order as the kernel's loop.
"""

from __future__ import annotations

import numpy as np

from ...seam.records import COLLIDER
from ...seam.tables import COLLIDER_TYPES
from ...simulate.effectors import COLLIDER_ROWS
from ...simulate.flocking import FlockConstants
from ...simulate.fluids import SCORR_POWER, FluidConstants
from ...simulate.neighbours import MAX_NEIGHBOURS, grid_values, table_size
from .neighbours import neighbour_lists
from .simulation import sdf_normal, sdf_sample

F = np.float32


def neighbours(positions: np.ndarray, radius: float, max_neighbours: int = MAX_NEIGHBOURS) -> np.ndarray:
    """The neighbour grid's visiting order (reference/simulate/neighbours.py) of live particles at ``positions``
    as an (n, k) table of slots, -1 where a particle has fewer than k (the hash table the GPU's grid of n slots
    has)."""
    p = np.asarray(positions, F)
    pos_age = np.concatenate([p, np.zeros((len(p), 1), F)], axis=1)
    vel_life = np.concatenate([np.zeros_like(p), np.ones((len(p), 1), F)], axis=1)
    lists, _ = neighbour_lists(pos_age, vel_life, radius, grid_values(radius, 1)["grid_inverse_cell"],
                               table_size(len(p)), max_neighbours)
    table = np.full((len(p), max(1, max(map(len, lists), default=0))), -1, np.int64)
    for i, found in enumerate(lists):
        table[i, :len(found)] = found
    return table


def _columns(table):
    """Each column of the neighbour table: the neighbour slots (a dummy 0 where padded) and where it is real."""
    for k in range(table.shape[1]):
        yield np.maximum(table[:, k], 0), table[:, k] >= 0


def _length(v):
    return np.sqrt(np.sum(v * v, axis=-1, dtype=F)).astype(F)


def _poly6(r2, c: FluidConstants):
    h2 = F(c.radius) * F(c.radius)
    x = np.maximum(h2 - r2, F(0))
    return (F(c.poly6) * x * x * x).astype(F)


def _spiky_gradient(d, r, c: FluidConstants):
    """The spiky kernel's gradient at offset ``d`` = p_i - p_j of length ``r`` (0 at r = 0 and beyond h)."""
    x = np.maximum(F(c.radius) - r, F(0))
    scale = np.where(r > F(0), F(c.spiky) * x * x / np.where(r > F(0), r, F(1)), F(0)).astype(F)
    return (d * scale[:, None]).astype(F)


def _pair(p, j):
    """Offsets p_i - p_j, their squares and lengths."""
    d = (p - p[j]).astype(F)
    r2 = np.sum(d * d, axis=1, dtype=F)
    return d, r2, np.sqrt(r2).astype(F)


def wall_density(surfaces, c: FluidConstants, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The density the colliders add as walls of fluid at rest, and its gradient: ``surfaces`` lists each
    collider's (signed distance, outward normal) per particle, in the colliders' order.  Where walls meet, the
    shares beyond them combine as 1 - prod(1 - share), so a corner is not counted twice."""
    open_share, open_gradient = np.ones(count, F), np.zeros((count, 3), F)  # prod(1 - share) and its gradient
    for distance, normal in surfaces:
        q = np.clip(np.asarray(distance, F) * (F(1.0) / F(c.radius)), F(-1), F(1)).astype(F)
        q2 = (q * q).astype(F)
        integral = (q * (F(1.0) + q2 * (F(-4.0 / 3.0) + q2 * (F(6.0 / 5.0) + q2 * (F(-4.0 / 7.0) + q2 * F(1.0 / 9.0))))))
        share = (F(0.5) - F(315.0 / 256.0) * integral.astype(F)).astype(F)
        x = (F(1.0) - q2).astype(F)
        slope = ((F(-315.0 / 256.0) / F(c.radius)) * (x * x) * (x * x)).astype(F)  # d share / d distance
        open_gradient = (open_gradient * (F(1.0) - share)[:, None]
                         - np.asarray(normal, F) * (open_share * slope)[:, None]).astype(F)
        open_share = (open_share * (F(1.0) - share)).astype(F)
    return ((F(1.0) - open_share) * F(c.wall_density)).astype(F), (open_gradient * -F(c.wall_density)).astype(F)


# -- fluid_lambda.glsl

def fluid_lambda(predicted: np.ndarray, table: np.ndarray, c: FluidConstants,
                 walls: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each particle's density (itself included) and lambda = -C / (sum |grad C|^2 + epsilon), C = rho / rho0 - 1
    where the fluid is compressed and ``cohesion`` times that where it is sparse (0: a free surface does not pull)."""
    p = np.asarray(predicted, F)
    density = _poly6(np.zeros(len(p), F), c)
    grad_i = np.zeros_like(p)
    if walls is not None:
        density = (density + walls[0]).astype(F)
        grad_i = (walls[1] * (F(1.0) / F(c.rest_density))).astype(F)
    grad_sum = np.zeros(len(p), F)
    inverse_rest = F(1.0) / F(c.rest_density)
    for j, real in _columns(table):
        d, r2, r = _pair(p, j)
        w = np.where(real, _poly6(r2, c), F(0))
        g = np.where(real[:, None], _spiky_gradient(d, r, c) * inverse_rest, F(0)).astype(F)
        density = (density + w).astype(F)
        grad_i = (grad_i + g).astype(F)
        grad_sum = (grad_sum + np.sum(g * g, axis=1, dtype=F)).astype(F)
    constraint = (density * inverse_rest - F(1.0)).astype(F)
    constraint = np.where(constraint > F(0), constraint, constraint * F(c.cohesion)).astype(F)
    denominator = (grad_sum + np.sum(grad_i * grad_i, axis=1, dtype=F) + F(c.relaxation)).astype(F)
    return density, (-constraint / denominator).astype(F)


# -- fluid_delta.glsl

def fluid_delta(predicted: np.ndarray, lambdas: np.ndarray, table: np.ndarray, c: FluidConstants,
                walls: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """delta-p_i = 1/rho0 sum (lambda_i + lambda_j + s_corr) grad W_spiky(p_i - p_j), s_corr the tensile term;
    the walls (fixed) add lambda_i times their density's gradient."""
    p = np.asarray(predicted, F)
    delta = np.zeros_like(p) if walls is None else (walls[1] * lambdas[:, None]).astype(F)
    for j, real in _columns(table):
        d, r2, r = _pair(p, j)
        ratio = (_poly6(r2, c) * F(c.scorr_inverse_w)).astype(F)
        scorr = (-F(c.scorr) * ratio ** SCORR_POWER).astype(F)
        weight = np.where(real, lambdas + lambdas[j] + scorr, F(0)).astype(F)
        delta = (delta + _spiky_gradient(d, r, c) * weight[:, None]).astype(F)
    return (delta * (F(1.0) / F(c.rest_density))).astype(F)


# -- fluid_vorticity.glsl

def fluid_vorticity(position: np.ndarray, velocity: np.ndarray, table: np.ndarray, c: FluidConstants) -> np.ndarray:
    """omega_i = 1/rho0 sum (v_j - v_i) x grad_j W_spiky, grad_j W = -grad W(p_i - p_j)."""
    p, v = np.asarray(position, F), np.asarray(velocity, F)
    omega = np.zeros_like(p)
    for j, real in _columns(table):
        d, r2, r = _pair(p, j)
        term = np.cross(v[j] - v, -_spiky_gradient(d, r, c)).astype(F)
        omega = (omega + np.where(real[:, None], term, F(0))).astype(F)
    return (omega * (F(1.0) / F(c.rest_density))).astype(F)


# -- fluid_viscosity.glsl

def fluid_viscosity(position, velocity, omega, table, c: FluidConstants, dt: float) -> np.ndarray:
    """XSPH viscosity plus vorticity confinement: v + c/rho0 sum (v_j - v_i) W_ij + dt eps h (N x omega), N the
    normalized gradient of |omega| (1/rho0 sum (|omega_j| - |omega_i|) grad W(p_i - p_j))."""
    p, v, omega = np.asarray(position, F), np.asarray(velocity, F), np.asarray(omega, F)
    strength = _length(omega)
    blend = np.zeros_like(v)
    eta = np.zeros_like(p)
    for j, real in _columns(table):
        d, r2, r = _pair(p, j)
        w = np.where(real, _poly6(r2, c), F(0))
        blend = (blend + (v[j] - v) * w[:, None]).astype(F)
        g = np.where(real[:, None], _spiky_gradient(d, r, c), F(0)).astype(F)
        eta = (eta + g * (strength[j] - strength)[:, None]).astype(F)
    inverse_rest = F(1.0) / F(c.rest_density)
    eta_length = _length(eta)
    normal = np.where(eta_length[:, None] > F(0), eta / np.where(eta_length > F(0), eta_length, F(1))[:, None], F(0))
    confinement = (np.cross(normal.astype(F), omega) * (F(dt) * F(c.vorticity) * F(c.radius))).astype(F)
    return (v + blend * (F(c.viscosity) * inverse_rest) + confinement).astype(F)


def collider_surfaces(colliders, collider_count: int, positions, atlas=None) -> list:
    """collider_surface() of fluid.glsl for every collider fluid leans on: (world signed distance less the
    thickness, outward unit normal) per particle, a plane's beyond its extent at +inf."""
    p_world = np.asarray(positions, F)
    surfaces = []
    for row in np.asarray(colliders, F).reshape(-1, COLLIDER_ROWS, 4)[:collider_count]:
        collider = COLLIDER.read(row)
        if collider["permeability"] > 0 or collider["kill"] > 0:
            continue
        to_local, half = collider["to_local"], collider["half_size"]
        p = (p_world @ to_local[:, :3].T + to_local[:, 3]).astype(F)
        local = np.tile(F([0, 0, 1]), (len(p), 1))
        kind = collider["kind"]
        if kind == COLLIDER_TYPES["PLANE"]:
            d = np.where((np.abs(p[:, 0]) > half[0]) | (np.abs(p[:, 1]) > half[1]), F(np.inf), p[:, 2])
        elif kind == COLLIDER_TYPES["SPHERE"]:
            r = _length(p)
            local = np.where(r[:, None] > 0, p / np.where(r > 0, r, F(1))[:, None], local).astype(F)
            d = (r - half[0]).astype(F)
        elif kind == COLLIDER_TYPES["BOX"]:
            q = (np.abs(p) - half).astype(F)
            outside = np.maximum(q, F(0))
            out_length = _length(outside)
            axis = np.where((q[:, 0] >= q[:, 1]) & (q[:, 0] >= q[:, 2]), 0, np.where(q[:, 1] >= q[:, 2], 1, 2))
            face = np.zeros_like(p)
            face[np.arange(len(p)), axis] = np.where(p[np.arange(len(p)), axis] < 0, F(-1), F(1))
            corner = outside * np.sign(p) / np.where(out_length > 0, out_length, F(1))[:, None]
            local = np.where(out_length[:, None] > 0, corner, face).astype(F)
            d = np.where(out_length > 0, out_length, q[np.arange(len(p)), axis]).astype(F)
        else:
            d, gradient = sdf_sample(collider, atlas, p)
            local = sdf_normal(gradient)
        world = (local[:, :1] * to_local[0, :3] + local[:, 1:2] * to_local[1, :3] + local[:, 2:] * to_local[2, :3])
        stretch = _length(world.astype(F))
        surfaces.append(((d / np.where(stretch > 0, stretch, F(1)) - collider["thickness"]).astype(F),
                         (world / np.where(stretch > 0, stretch, F(1))[:, None]).astype(F)))
    return surfaces


def project(positions, surfaces) -> np.ndarray:
    """fluid_project(): each point moved out of every collider, onto its surface plus thickness."""
    p = np.asarray(positions, F)
    for k in range(len(surfaces(p[:0]))):  # one collider after another, each from where the last left it
        distance, normal = surfaces(p)[k]
        p = np.where((distance < 0)[:, None], p - normal * distance[:, None], p).astype(F)
    return p


def fluid_solve(predicted, velocity, c: FluidConstants, dt: float, iterations: int, surfaces=None):
    """FluidSolver.step: the grid's order at the predicted positions, once for the whole step (Macklin and Müller's
    algorithm 1), ``iterations`` of lambda then delta-p (moved out of the colliders), velocity (own plus the move
    over dt), vorticity and viscosity at the final positions over the same neighbours.  ``surfaces(p)``: the
    colliders' (distance, normal) at points p (collider_surfaces).  Returns position, velocity, and the density
    the step's neighbours make at the final positions."""
    x = np.asarray(predicted, F)
    table = neighbours(x, c.radius)

    def walls(p):
        return None if surfaces is None else wall_density([(d + F(c.size), n) for d, n in surfaces(p)], c, len(p))

    p = x
    for _ in range(iterations):
        wall = walls(p)
        _, lambdas = fluid_lambda(p, table, c, wall)
        p = (p + fluid_delta(p, lambdas, table, c, wall)).astype(F)
        if surfaces is not None:
            p = project(p, surfaces)
    v = (np.asarray(velocity, F) + (p - x) * F(1.0 / dt)).astype(F)
    omega = fluid_vorticity(p, v, table, c)
    v = fluid_viscosity(p, v, omega, table, c, dt)
    density, _ = fluid_lambda(p, table, c, walls(p))
    return p, v, density


def fluid_step(position, velocity, c: FluidConstants, dt: float, gravity, iterations: int, surfaces=None):
    """A whole step as the product takes it (Macklin and Müller's algorithm 1): gravity and the predicted
    position (the simulate kernel's, out of the colliders), then fluid_solve."""
    v = (np.asarray(velocity, F) + F(dt) * np.asarray(gravity, F)).astype(F)
    predicted = (np.asarray(position, F) + v * F(dt)).astype(F)
    if surfaces is not None:
        predicted = project(predicted, surfaces)
    return fluid_solve(predicted, v, c, dt, iterations, surfaces)


# -- flocking.glsl

def _steer(desired, velocity, c: FlockConstants):
    """Reynolds' steering toward ``desired`` (a direction): desired at full speed minus velocity, at most the
    steering force; nothing where ``desired`` is zero."""
    length = _length(desired)
    unit = np.where(length[:, None] > F(0), desired / np.where(length > F(0), length, F(1))[:, None], F(0))
    steer = (unit * F(c.max_speed) - velocity).astype(F)
    return np.where(length[:, None] > F(0), _clamp_length(steer, c.max_force), F(0)).astype(F)


def _clamp_length(v, limit):
    length = _length(v)
    scale = np.where(length > F(limit), F(limit) / np.where(length > F(0), length, F(1)), F(1)).astype(F)
    return (v * scale[:, None]).astype(F)


def flock_rules(position, velocity, table, c: FlockConstants) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The three rules' desired directions within the view radius and cone: separation (away from each seen
    neighbour, weighted 1/r), alignment (the seen neighbours' mean velocity), cohesion (toward their centroid);
    and how many neighbours each particle saw."""
    p, v = np.asarray(position, F), np.asarray(velocity, F)
    speed = _length(v)
    heading = np.where(speed[:, None] > F(0), v / np.where(speed > F(0), speed, F(1))[:, None], F(0)).astype(F)
    separation, alignment, centre = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
    seen = np.zeros(len(p), F)
    for j, real in _columns(table):
        d = (p[j] - p).astype(F)
        r2 = np.sum(d * d, axis=1, dtype=F)
        r = np.sqrt(r2).astype(F)
        ahead = np.sum(heading * d, axis=1, dtype=F)
        visible = real & (r2 < F(c.view_radius) * F(c.view_radius)) & (r2 > F(0))
        visible &= (speed == F(0)) | (ahead >= F(c.view_cos) * r)
        separation = (separation - np.where(visible[:, None], d / np.where(r2 > F(0), r2, F(1))[:, None], F(0)))
        separation = separation.astype(F)
        alignment = (alignment + np.where(visible[:, None], v[j], F(0))).astype(F)
        centre = (centre + np.where(visible[:, None], d, F(0))).astype(F)
        seen = (seen + visible.astype(F)).astype(F)
    inverse = np.where(seen > F(0), F(1.0) / np.where(seen > F(0), seen, F(1)), F(0)).astype(F)
    return separation, (alignment * inverse[:, None]).astype(F), (centre * inverse[:, None]).astype(F), seen


def collider_avoidance(surfaces, c: FlockConstants, count: int) -> np.ndarray:
    """flock_steer's ``away``: the normals of the colliders nearer than the avoid distance, each weighted by how
    much nearer (``surfaces``: collider_surfaces)."""
    away = np.zeros((count, 3), F)
    for distance, normal in surfaces:
        near = (F(1.0) - distance / F(c.avoid_distance)).astype(F)
        away = (away + np.where((distance < F(c.avoid_distance))[:, None], normal * near[:, None], F(0))).astype(F)
    return away


def flock_steering(position, velocity, table, c: FlockConstants, target=None, away=None) -> np.ndarray:
    """The steering acceleration: the rules, the target and ``away`` (collider_avoidance) weighted, summed, at
    most the steering force."""
    p, v = np.asarray(position, F), np.asarray(velocity, F)
    separation, alignment, cohesion, _ = flock_rules(p, v, table, c)
    force = (F(c.separation) * _steer(separation, v, c) + F(c.alignment) * _steer(alignment, v, c)).astype(F)
    force = (force + F(c.cohesion) * _steer(cohesion, v, c)).astype(F)
    if target is not None:
        force = (force + F(c.seek) * _steer((np.asarray(target, F) - p).astype(F), v, c)).astype(F)
    if away is not None:
        force = (force + F(c.avoid) * _steer(np.asarray(away, F), v, c) * _length(away)[:, None]).astype(F)
    return _clamp_length(force, c.max_force)


def flock_step(position, velocity, c: FlockConstants, dt: float, target=None, surfaces=None):
    """FlockSolver.step on birds the simulate dispatch moved: the grid's order there, the steering, the speed
    clamped, the position moved by the velocity's change over the step.  ``surfaces(p)``: collider_surfaces."""
    p, v = np.asarray(position, F), np.asarray(velocity, F)
    away = None if surfaces is None else collider_avoidance(surfaces(p), c, len(p))
    steered = (v + flock_steering(p, v, neighbours(p, c.view_radius), c, target, away) * F(dt)).astype(F)
    steered = _clamp_length(steered, c.max_speed)
    return (p + (steered - v) * F(dt)).astype(F), steered
