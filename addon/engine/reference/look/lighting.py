"""numpy reference of the light pass (shaders/light_particles.glsl) and of a lit particle's drawn color.

In float64 from lighting.py's formulas (the GPU works in float32 and stores half floats: the tests compare
within those roundings), not a bit-exact mirror.
"""

from __future__ import annotations

import math

import numpy as np

from ...look.lighting import RADIANCE_LIMIT, SceneLights, irradiance, phase
from ...look.look import color_t, look_at, look_table, variation
from ...seam.records import PARTICLE
from ..seam.state import alive

LUMINANCE = np.array([0.2126, 0.7152, 0.0722])  # light_particles.glsl's weights of the lights' directions


def _scattered(settings, lights: SceneLights, eye, pos_age, vel_life, transmittance):
    """(live, ambient, terms) of (n, 4) states: which particles are alive, the ambient (m, 3) at the m live ones
    and per light its E / pi x phase x T (m, 3) there with the direction it travels (m, 3)."""
    live, particle = alive(pos_age, vel_life), PARTICLE.read_images(pos_age, vel_life)
    points = particle["position"][live]
    to_eye = np.asarray(eye, np.float64) - points
    length = np.linalg.norm(to_eye, axis=1, keepdims=True)
    view = np.divide(to_eye, length, out=np.zeros_like(to_eye), where=length > 0)
    index = np.flatnonzero(live)
    t = np.clip(particle["age"][live] / particle["life"][live], 0.0, 1.0)
    radius = (settings.size * look_at(look_table(settings), t.astype(np.float32))[:, 3]
              * variation(index, settings.size_random, settings.seed, "SIZE"))
    terms = []
    for light in lights.lights:
        e, travel = irradiance(light, points, radius)
        shadow = 1.0
        if transmittance is not None and light.shadow_slot >= 0:
            shadow = np.asarray(transmittance, np.float64)[live, light.shadow_slot][:, None]
        terms.append((e / math.pi * phase(settings.anisotropy, np.einsum("ij,ij->i", travel, view))[:, None] * shadow,
                      travel))
    return live, np.broadcast_to(np.asarray(lights.ambient, np.float64), points.shape), terms


def particle_light(settings, lights: SceneLights, eye, pos_age, vel_life, transmittance=None) -> np.ndarray:
    """(n, 3) radiance each particle of (n, 4) states (world positions) scatters toward ``eye``; dead ones 0.
    ``transmittance``: (n, 4) per shadow slot at each particle (None: 1)."""
    pos_age, vel_life = np.asarray(pos_age, np.float64), np.asarray(vel_life, np.float64)
    live, ambient, terms = _scattered(settings, lights, eye, pos_age, vel_life, transmittance)
    total = ambient + sum(scattered for scattered, _ in terms)
    particle = PARTICLE.read_images(pos_age, vel_life)
    t = color_t(particle["velocity"][live].astype(np.float32), particle["age"][live] / particle["life"][live], settings)
    t = np.clip(t, 0.0, 1.0)[:, None]
    start, end = np.asarray(settings.albedo, np.float64), np.asarray(settings.albedo_end, np.float64)
    radiance = np.zeros((len(pos_age), 3))
    radiance[live] = np.minimum((start + (end - start) * t) * total, RADIANCE_LIMIT)
    return radiance


def light_direction(settings, lights: SceneLights, view, pos_age, vel_life, transmittance=None) -> np.ndarray:
    """(n, 2) where each particle's light comes from, seen through ``view`` (world to view): the directions toward
    the lights weighted by each one's luminance in the radiance, over the luminance of all of it with the ambient,
    on the view's x and y axes; dead ones and unlit ones 0."""
    pos_age, vel_life = np.asarray(pos_age, np.float64), np.asarray(vel_life, np.float64)
    view = np.asarray(view, np.float64)
    eye = np.linalg.inv(view)[:3, 3]
    live, ambient, terms = _scattered(settings, lights, eye, pos_age, vel_life, transmittance)
    toward = -sum((travel * (scattered @ LUMINANCE)[:, None] for scattered, travel in terms), np.zeros_like(ambient))
    weight = (ambient + sum(scattered for scattered, _ in terms)) @ LUMINANCE
    seen = np.zeros((len(pos_age), 2))
    seen[live] = np.divide(toward @ view[:2, :3].T, weight[:, None], out=np.zeros((len(weight), 2)),
                           where=weight[:, None] > 0)
    return seen


def drawn_radiance(settings, light: np.ndarray, emission: np.ndarray) -> np.ndarray:
    """particle_color()'s color before brightness variation and coverage: the light pass's ``light`` for Lit,
    plus the look's ``emission`` (color x strength) for Both, the emission alone for Emission."""
    if settings.lighting == "EMISSION":
        return emission
    return light + emission if settings.lighting == "BOTH" else light
