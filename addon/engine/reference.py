"""Numpy reference of every kernel, the same algorithm in the same float32 order.

Tests diff the GPU kernels against these: integer results (packing, carry,
overflow counts) exactly, float results within a tight tolerance.  Arrays are
(count, 4) float32 in the layout ``kernels.py`` documents.
"""

from __future__ import annotations

import numpy as np

from .pipeline import CHANNEL_MAX, SHAPES, birth_interval, emitter_constants

F = np.float32
U = np.uint32
LOW21 = U(0x1FFFFF)
LOW11 = U(0x7FF)


# -- random.glsl ------------------------------------------------------------

def pcg_hash(v):
    v = np.asarray(v, dtype=U)
    with np.errstate(over="ignore"):
        state = v * U(747796405) + U(2891336453)
        word = ((state >> ((state >> U(28)) + U(4))) ^ state) * U(277803737)
    return (word >> U(22)) ^ word


def random_unit(index, step: int, stream: int):
    h = pcg_hash(np.asarray(index, dtype=U) ^ pcg_hash(U(step) ^ pcg_hash(U(stream))))
    return (h >> U(8)).astype(F) * F(1.0 / 16777216.0)


def random_direction(u, v):
    z = F(2.0) * u - F(1.0)
    r = np.sqrt(np.maximum(F(0.0), F(1.0) - z * z))
    phi = F(6.28318530718) * v
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=-1).astype(F)


# -- init_particles.glsl -------------------------------------------------------

def init_particles(settings) -> tuple[np.ndarray, np.ndarray]:
    count = settings.count
    pos_age = np.zeros((count, 4), F)
    pos_age[:, 3] = -F(birth_interval(settings)) * np.arange(count, dtype=F)
    return pos_age, np.zeros((count, 4), F)


# -- simulate.glsl ---------------------------------------------------------------

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


# -- splat.glsl + resolve.glsl --------------------------------------------------------

def splat(pos_age, vel_life, view_proj, width, height, settings, emax, pixels_per_unit):
    """Integer accumulation images (hi, lo) and the overflow count, as the kernel leaves them."""
    age, life = pos_age[:, 3], vel_life[:, 3]
    with np.errstate(invalid="ignore"):
        alive = (age >= 0) & (age < life) & np.isfinite(pos_age[:, :3]).all(axis=1)
        p = pos_age[alive, :3]
        clip = np.concatenate([p, np.ones((len(p), 1), F)], axis=1) @ np.asarray(view_proj, dtype=F).T
        w = clip[:, 3]
        inside = (w > 0) & (np.abs(clip[:, :3]) <= w[:, None]).all(axis=1)
    clip, w = clip[inside], w[inside]
    t = (age[alive] / life[alive])[inside]
    size = np.array([width, height], F)
    screen = (clip[:, :2] / w[:, None] * F(0.5) + F(0.5)) * size
    pixel = np.minimum(screen.astype(np.int32), np.array([width - 1, height - 1]))

    radius_px = F(settings.size) * F(pixels_per_unit) / w
    coverage = np.minimum(F(3.14159265) * radius_px * radius_px, F(1.0))
    c0, c1 = np.asarray(settings.color_start, F), np.asarray(settings.color_end, F)
    color = (c0 + (c1 - c0) * t[:, None]) * (F(settings.emission_strength) * coverage)[:, None]
    quantize = (CHANNEL_MAX / emax).astype(F)
    scaled = np.clip(color * quantize, F(0), CHANNEL_MAX.astype(F))
    q = (scaled + F(0.5)).astype(U)
    return accumulate(pixel, q, width, height)


def accumulate(pixel, q, width, height):
    """Sum packed adds per pixel exactly as the atomics do (order-independent)."""
    flat = pixel[:, 1].astype(np.int64) * width + pixel[:, 0]
    n = width * height
    r = np.bincount(flat, q[:, 0].astype(np.int64), n).astype(np.int64)
    g = q[:, 1].astype(np.int64)
    g_high = np.bincount(flat, g >> 11, n).astype(np.int64)
    g_low = np.bincount(flat, g & 0x7FF, n).astype(np.int64)
    b = np.bincount(flat, q[:, 2].astype(np.int64), n).astype(np.int64)
    lo_total = b + (g_low << 21)
    carries = lo_total >> 32
    hi_total = r + (g_high << 21) + (carries << 21)
    overflow = int((r >> 21).sum() + (b >> 21).sum() + (hi_total >> 32).sum())
    hi = (hi_total & 0xFFFFFFFF).astype(U).reshape(height, width)
    lo = (lo_total & 0xFFFFFFFF).astype(U).reshape(height, width)
    return hi, lo, overflow


def resolve(hi, lo, emax):
    """Float RGBA frame from the accumulation, as ``resolve.glsl`` writes it."""
    r = hi & LOW21
    g = ((hi >> U(21)) << U(11)) | (lo >> U(21))
    b = lo & LOW21
    color = np.stack([r, g, b], axis=-1).astype(F) * (emax / CHANNEL_MAX).astype(F)
    alpha = np.clip(color.max(axis=-1), 0, 1)
    return np.concatenate([color, alpha[..., None]], axis=-1).astype(F)
