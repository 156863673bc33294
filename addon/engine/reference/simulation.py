"""Reference of init_particles.glsl and simulate.glsl, in the kernels' float32 order."""

from __future__ import annotations

import numpy as np

from ..simulation import SHAPES, birth_interval, emitter_constants
from .random import random_direction, random_unit

F = np.float32
U = np.uint32


# -- init_particles.glsl

def init_particles(settings) -> tuple[np.ndarray, np.ndarray]:
    count = settings.count
    pos_age = np.zeros((count, 4), F)
    pos_age[:, 3] = -F(birth_interval(settings)) * np.arange(count, dtype=F)
    return pos_age, np.zeros((count, 4), F)


# -- simulate.glsl

def _transform(matrix, points):
    m = np.asarray(matrix, dtype=F)
    return (points @ m[:3, :3].T + m[:3, 3]).astype(F)


def _emit(index, lived, c):
    i = index.astype(U)
    step, stream = c["step_index"], c["seed"] * 8
    local = np.zeros((len(i), 3), F)
    if c["emit_shape"][0] == SHAPES["SPHERE"]:
        direction = random_direction(random_unit(i, step, stream), random_unit(i, step, stream + 1))
        radius = F(c["emit_shape"][1]) * np.power(random_unit(i, step, stream + 2), F(1.0) / F(3.0))
        local = direction * radius[:, None]
    start = _transform(c["emitter_prev"], local)
    end = _transform(c["emitter_cur"], local)
    dt = F(c["dt"])
    birth_fraction = F(1.0) - lived / dt
    position = start + (end - start) * birth_fraction[:, None]
    jitter = random_direction(random_unit(i, step, stream + 3), random_unit(i, step, stream + 4))
    speed = F(c["emit_velocity"][3]) * random_unit(i, step, stream + 5)
    base = np.asarray(c["emitter_cur"], dtype=F)[:3, :3] @ np.asarray(c["emit_velocity"][:3], dtype=F)
    velocity = base + jitter * speed[:, None] + (end - start) * (F(c["emit_shape"][2]) / dt)
    life = F(c["lifetime_range"][0]) * (F(1.0) - F(c["lifetime_range"][1]) * random_unit(i, step, stream + 6))
    return position.astype(F), velocity.astype(F), life.astype(F)


def simulate(pos_age, vel_life, c) -> tuple[np.ndarray, np.ndarray]:
    """One ``simulate.glsl`` step with the constants ``emitter_constants`` builds."""
    pos_age, vel_life = pos_age.copy(), vel_life.copy()
    dt = F(c["dt"])
    position, velocity = pos_age[:, :3], vel_life[:, :3]
    age = pos_age[:, 3] + dt
    life = vel_life[:, 3].copy()

    born = (age >= 0) & (life == 0)
    expired = (life > 0) & (age >= life)
    if not c["flags"] & 1:
        life[expired] = -1.0
    active = (age >= 0) & (life >= 0)

    lived = np.full(len(age), dt, F)
    spawn = active & (born | expired)
    lived[spawn] = np.minimum(np.where(born, age, age - life), dt)[spawn]
    index = np.flatnonzero(spawn)
    if len(index):
        p, v, new_life = _emit(index, lived[index], c)
        position[index], velocity[index], life[index] = p, v, new_life
        age[index] = lived[index]

    gravity = np.asarray(c["gravity_drag"][:3], dtype=F)
    acceleration = gravity - F(c["gravity_drag"][3]) * velocity
    h = lived[:, None]
    moved = np.where(active[:, None], position + velocity * h, position)
    velocity = np.where(active[:, None], velocity + acceleration * h, velocity)
    pos_age[:, :3], pos_age[:, 3] = moved, age
    vel_life[:, :3], vel_life[:, 3] = velocity, life
    return pos_age, vel_life


def run_steps(settings, frames: int, dt: float, emitter_prev, emitter_cur):
    """Reference of ``ParticleSystem.reset`` + ``step`` (substeps included)."""
    pos_age, vel_life = init_particles(settings)
    step_index = 0
    for _ in range(frames):
        for k in range(settings.substeps):
            s = settings.substeps
            start = emitter_prev + (emitter_cur - emitter_prev) * (k / s)
            end = emitter_prev + (emitter_cur - emitter_prev) * ((k + 1) / s)
            c = emitter_constants(settings, dt / s, step_index, settings.count, start, end)
            pos_age, vel_life = simulate(pos_age, vel_life, c)
            step_index += 1
    return pos_age, vel_life
