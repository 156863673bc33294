"""numpy reference of the light pass (shaders/light_particles.glsl) and of a lit particle's drawn color.

In float64 from lighting.py's formulas (the GPU works in float32 and stores half floats: the tests compare
within those roundings), not a bit-exact mirror.
"""

from __future__ import annotations

import math

import numpy as np

from ..lighting import RADIANCE_LIMIT, SceneLights, irradiance, phase
from ..look import look_at, look_table, variation


def alive(pos_age: np.ndarray, vel_life: np.ndarray) -> np.ndarray:
    """particle_alive() of particle_look.glsl per row of (n, 4) states."""
    with np.errstate(invalid="ignore"):
        return (pos_age[:, 3] >= 0) & (pos_age[:, 3] < vel_life[:, 3]) & np.isfinite(pos_age[:, :3]).all(axis=1)


def particle_light(settings, lights: SceneLights, eye, pos_age, vel_life, transmittance=None) -> np.ndarray:
    """(n, 3) radiance each particle of (n, 4) states (world positions) scatters toward ``eye``; dead ones 0.
    ``transmittance``: (n, 4) per shadow slot at each particle (None: 1)."""
    pos_age, vel_life = np.asarray(pos_age, np.float64), np.asarray(vel_life, np.float64)
    live = alive(pos_age, vel_life)
    points = pos_age[live, :3]
    to_eye = np.asarray(eye, np.float64) - points
    length = np.linalg.norm(to_eye, axis=1, keepdims=True)
    view = np.divide(to_eye, length, out=np.zeros_like(to_eye), where=length > 0)
    index = np.flatnonzero(live)
    t = np.clip(pos_age[live, 3] / vel_life[live, 3], 0.0, 1.0)
    radius = (settings.size * look_at(look_table(settings), t.astype(np.float32))[:, 3]
              * variation(index, settings.size_random, settings.seed, "SIZE"))
    total = np.broadcast_to(np.asarray(lights.ambient, np.float64), points.shape).copy()
    for light in lights.lights:
        e, travel = irradiance(light, points, radius)
        shadow = 1.0
        if transmittance is not None and light.shadow_slot >= 0:
            shadow = np.asarray(transmittance, np.float64)[live, light.shadow_slot][:, None]
        total += e / math.pi * phase(settings.anisotropy, np.einsum("ij,ij->i", travel, view))[:, None] * shadow
    t = t[:, None]
    start, end = np.asarray(settings.albedo, np.float64), np.asarray(settings.albedo_end, np.float64)
    radiance = np.zeros((len(pos_age), 3))
    radiance[live] = np.minimum((start + (end - start) * t) * total, RADIANCE_LIMIT)
    return radiance


def drawn_radiance(settings, light: np.ndarray, emission: np.ndarray) -> np.ndarray:
    """particle_color()'s color before brightness variation and coverage: the light pass's ``light`` for Lit,
    plus the look's ``emission`` (color x strength) for Both, the emission alone for Emission."""
    if settings.lighting == "EMISSION":
        return emission
    return light + emission if settings.lighting == "BOTH" else light
