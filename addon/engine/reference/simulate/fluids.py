"""Reference of the fluid and flocking passes: one PBF iteration (density and lambda, then delta-p), vorticity,
XSPH viscosity with vorticity confinement, and the boids' steering, in float32 and in the kernels' neighbour order.

Every pass gathers: particle i sums over its own neighbours in a fixed order (the 27 cells around its cell, z then
y then x from -1 to 1, each cell's particles by slot), at most ``max_neighbours`` of them, itself left out.
``neighbours`` gives that order as an (n, k) table padded with -1; each sum below adds one column at a time, so
each particle's float32 sum is taken in the same order as the kernel's loop.
"""

from __future__ import annotations

import numpy as np

from ...simulate.fluids import SCORR_POWER, FlockConstants, FluidConstants

F = np.float32


def neighbours(positions: np.ndarray, radius: float, max_neighbours: int) -> tuple[np.ndarray, np.ndarray]:
    """(n, k) neighbour slots within ``radius`` in the fixed order (-1 pads), and each particle's count of those
    left out over ``max_neighbours`` (the overflow).  All pairs at once: for the small clouds the tests use."""
    p = np.asarray(positions, F)
    count = len(p)
    cells = np.floor(p / F(radius)).astype(np.int64)
    d = (p[None, :, :] - p[:, None, :]).astype(F)
    near = np.sum(d * d, axis=2, dtype=F) < F(radius) * F(radius)
    np.fill_diagonal(near, False)
    step = np.clip(cells[None, :, :] - cells[:, None, :], -1, 1) + 1  # within the radius: a neighbouring cell
    visit = step[..., 2] * 9 + step[..., 1] * 3 + step[..., 0]  # the cell's place among the 27 (z, then y, then x)
    key = np.where(near, visit * count + np.arange(count)[None, :], np.iinfo(np.int64).max)
    found = near.sum(axis=1)
    width = max(1, min(max_neighbours, int(found.max(initial=0))))
    order = np.argsort(key, axis=1, kind="stable")[:, :width]
    table = np.where(np.arange(width)[None, :] < np.minimum(found, max_neighbours)[:, None], order, -1)
    return table, np.maximum(found - max_neighbours, 0)


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


def _pair(p, i_values, j_values):
    d = (p - p[j_values]).astype(F)
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
        d, r2, r = _pair(p, None, j)
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
        d, r2, r = _pair(p, None, j)
        ratio = (_poly6(r2, c) * F(c.scorr_inverse_w)).astype(F)
        scorr = (-F(c.scorr) * ratio ** SCORR_POWER).astype(F)
        weight = np.where(real, lambdas + lambdas[j] + scorr, F(0)).astype(F)
        delta = (delta + _spiky_gradient(d, r, c) * weight[:, None]).astype(F)
    return (delta * (F(1.0) / F(c.rest_density))).astype(F)


# -- fluid_vorticity.glsl

def fluid_vorticity(predicted: np.ndarray, velocity: np.ndarray, table: np.ndarray, c: FluidConstants) -> np.ndarray:
    """omega_i = 1/rho0 sum (v_j - v_i) x grad_j W_spiky, grad_j W = -grad W(p_i - p_j)."""
    p, v = np.asarray(predicted, F), np.asarray(velocity, F)
    omega = np.zeros_like(p)
    for j, real in _columns(table):
        d, r2, r = _pair(p, None, j)
        term = np.cross(v[j] - v, -_spiky_gradient(d, r, c)).astype(F)
        omega = (omega + np.where(real[:, None], term, F(0))).astype(F)
    return (omega * (F(1.0) / F(c.rest_density))).astype(F)


# -- fluid_viscosity.glsl

def fluid_viscosity(predicted, velocity, omega, table, c: FluidConstants, dt: float) -> np.ndarray:
    """XSPH viscosity plus vorticity confinement: v + c/rho0 sum (v_j - v_i) W_ij + dt eps h (N x omega), N the
    normalized gradient of |omega| (1/rho0 sum (|omega_j| - |omega_i|) grad W(p_i - p_j))."""
    p, v, omega = np.asarray(predicted, F), np.asarray(velocity, F), np.asarray(omega, F)
    strength = _length(omega)
    blend = np.zeros_like(v)
    eta = np.zeros_like(p)
    for j, real in _columns(table):
        d, r2, r = _pair(p, None, j)
        w = np.where(real, _poly6(r2, c), F(0))
        blend = (blend + (v[j] - v) * w[:, None]).astype(F)
        g = np.where(real[:, None], _spiky_gradient(d, r, c), F(0)).astype(F)
        eta = (eta + g * (strength[j] - strength)[:, None]).astype(F)
    inverse_rest = F(1.0) / F(c.rest_density)
    eta_length = _length(eta)
    normal = np.where(eta_length[:, None] > F(0), eta / np.where(eta_length > F(0), eta_length, F(1))[:, None], F(0))
    confinement = (np.cross(normal.astype(F), omega) * (F(dt) * F(c.vorticity) * F(c.radius))).astype(F)
    return (v + blend * (F(c.viscosity) * inverse_rest) + confinement).astype(F)


def fluid_step(position, velocity, c: FluidConstants, dt: float, gravity, iterations: int, max_neighbours: int,
               project=None, surfaces=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One whole PBF step (Macklin and Müller's algorithm 1): forces and the predicted position, the neighbour
    order found once on the prediction, ``iterations`` of lambda then delta-p (``project`` moves the result out of
    colliders after each; ``surfaces(p)`` gives the colliders' (distance, normal) for wall_density), velocity from the
    move, vorticity, viscosity.  Returns position, velocity, density."""
    x = np.asarray(position, F)
    v = (np.asarray(velocity, F) + F(dt) * np.asarray(gravity, F)).astype(F)
    predicted = (x + v * F(dt)).astype(F)
    if project is not None:
        predicted = project(predicted)
    table, _ = neighbours(predicted, c.radius, max_neighbours)
    def walls():
        return None if surfaces is None else wall_density(surfaces(predicted), c, len(predicted))

    for _ in range(iterations):
        wall = walls()
        _, lambdas = fluid_lambda(predicted, table, c, wall)
        predicted = (predicted + fluid_delta(predicted, lambdas, table, c, wall)).astype(F)
        if project is not None:
            predicted = project(predicted)
    v = ((predicted - x) * (F(1.0) / F(dt))).astype(F)
    omega = fluid_vorticity(predicted, v, table, c)
    v = fluid_viscosity(predicted, v, omega, table, c, dt)
    density, _ = fluid_lambda(predicted, table, c, walls())
    return predicted, v, density


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


def flock_steering(position, velocity, table, c: FlockConstants, target=None, away=None) -> np.ndarray:
    """The steering acceleration: the rules, the target and ``away`` (each particle's direction out of the
    colliders it is near, scaled by how near: collider_avoidance) weighted, summed, at most the steering force."""
    p, v = np.asarray(position, F), np.asarray(velocity, F)
    separation, alignment, cohesion, _ = flock_rules(p, v, table, c)
    force = (F(c.separation) * _steer(separation, v, c) + F(c.alignment) * _steer(alignment, v, c)).astype(F)
    force = (force + F(c.cohesion) * _steer(cohesion, v, c)).astype(F)
    if target is not None:
        force = (force + F(c.seek) * _steer((np.asarray(target, F) - p).astype(F), v, c)).astype(F)
    if away is not None:
        force = (force + F(c.avoid) * _steer(np.asarray(away, F), v, c) * _length(away)[:, None]).astype(F)
    return _clamp_length(force, c.max_force)


def flock_step(position, velocity, c: FlockConstants, dt: float, max_neighbours: int, target=None, away=None):
    """One boids step: steer, clamp the speed, move."""
    p, v = np.asarray(position, F), np.asarray(velocity, F)
    table, _ = neighbours(p, c.view_radius, max_neighbours)
    v = _clamp_length((v + flock_steering(p, v, table, c, target, away) * F(dt)).astype(F), c.max_speed)
    return (p + v * F(dt)).astype(F), v
