"""Look over lifetime: a small lookup table of color and size against age / lifetime (the color, with color_by
SPEED, against speed / color_speed instead).

The splat reads it (``shaders/include/look.glsl``) with linear interpolation between
texels, so any color ramp, including a Blender color ramp sampled by the
add-on, costs the same two texel loads per particle.
"""

from __future__ import annotations

import numpy as np

from ..seam.kernels import Constant, Image, Sampler
from ..seam.random import random_unit
from ..seam.tables import RANDOM_STREAMS, SPRITE_DRAWS

LOOK_SIZE = 64  # texels from birth (t = 0) to death (t = 1)

# The look constants of every kernel that draws particles (particle_look.glsl); rgb: the
# settings' colors (the look table carries the colors the kernels use).
COLOR_START = Constant("VEC4", "color_start", components=(("emission_strength", "w"),))
COLOR_END = Constant("VEC4", "color_end", components=(("world_radius", "w"),))
LOOK_RANDOM = Constant("VEC4", "look_random", components=(("brightness_random", "x"), ("size_random", "y"),
                                                         ("color_per_speed", "z")))
LOOK_SEED = Constant("INT", "look_seed")
# What a kernel that works out particles' looks reads: the look table (look.glsl) and the system's state.
LOOK_TABLE = Image("look", "RGBA32F", "READ")
PARTICLE_STATE = (Sampler("pos_age"), Sampler("vel_life"))
# A spawned effect's per-slot tint (spawn_tint.glsl writes it at birth, particle_color mixes it in): rgb the parent's
# color at the event, a the fraction of it (spawn_inherit_color).
PARTICLE_TINT = Sampler("particle_tint")


def inherits_color(settings) -> bool:
    """Whether an effect's particles take their parent's color (a tint a slot, only for those effects)."""
    return bool(settings.spawn_from) and settings.spawn_inherit_color > 0.0


def particle_values(system) -> dict:
    """What every kernel that draws a system's particles takes besides its own: the look constants above
    from the effect's settings, and state_origin (what its stored positions are relative to)."""
    s = system.settings
    emission = 0.0 if s.lighting == "LIT" else s.emission_strength  # Lit: the light pass's radiance alone
    return {"color_start": (*s.color_start, emission), "color_end": (*s.color_end, s.size),
            "state_origin": (*system.origin, 0.0),
            "look_random": (s.color_random, s.size_random, color_per_speed(s), 0.0),
            "look_seed": s.seed}


def color_per_speed(settings) -> float:
    """color_per_speed of particle_look.glsl: 1 / color_speed where the color follows the speed (color_by SPEED),
    0 where it follows the age."""
    return 1.0 / settings.color_speed if settings.color_by == "SPEED" else 0.0


def look_table(settings, ramp: np.ndarray | None = None) -> np.ndarray:
    """(LOOK_SIZE, 4) float32: rgb color (the ramp's, or start to end), a: size factor (1 to size_end)."""
    t = np.linspace(0.0, 1.0, LOOK_SIZE)[:, None]
    table = np.empty((LOOK_SIZE, 4), np.float64)
    if ramp is None:
        start, end = np.asarray(settings.color_start, np.float64), np.asarray(settings.color_end, np.float64)
        table[:, :3] = start + (end - start) * t
    else:
        table[:, :3] = np.asarray(ramp, np.float64).reshape(LOOK_SIZE, 3)
    table[:, 3] = 1.0 + (settings.size_end - 1.0) * t[:, 0]
    return table.astype(np.float32)


def look_at(table, t):
    """look_at() of look.glsl: the look table at t, linear between texels, in the kernel's float32 order."""
    last = len(table) - 1
    x = np.clip(t, np.float32(0), np.float32(1)) * np.float32(last)
    i = np.minimum(x.astype(np.int64), last - 1)
    f = x - i.astype(np.float32)
    steps = np.take(table[1:] - table[:-1], i, axis=0)  # table[i + 1] - table[i], one gather (a point cache's 1M)
    return (np.take(table, i, axis=0) + steps * f[:, None]).astype(np.float32)


def particle_look(table, t, velocity, settings):
    """particle_look() of particle_look.glsl: the look table at t (life fraction: the size, and by age the color),
    its color at color_t with the color by speed (``velocity``: (n, 3) float32)."""
    look = look_at(table, t)
    if color_per_speed(settings) > 0.0:
        look[:, :3] = look_at(table, color_t(velocity, t, settings))[:, :3]
    return look


def color_t(velocity, t, settings):
    """color_t() of particle_look.glsl: where along the table a particle's color is: its speed over color_speed
    (color_by SPEED), else ``t``."""
    per_speed = color_per_speed(settings)
    if per_speed == 0.0:
        return t
    v = np.asarray(velocity, np.float32)
    speed = np.sqrt((v[..., 0] * v[..., 0] + v[..., 1] * v[..., 1]) + v[..., 2] * v[..., 2])  # length_rn's order
    return (speed * np.float32(per_speed)).astype(np.float32)


def variation(index, amount, seed, stream: str):
    """variation() of look.glsl: 1 - amount * u from the named stream (tables.RANDOM_STREAMS)."""
    return np.float32(1.0) - np.float32(amount) * random_unit(
        index, 0, seed * RANDOM_STREAMS["PER_SEED"] + RANDOM_STREAMS[stream])


def sprite_draw(index, seed: int, draw: str):
    """sprite_draw() of sprite_pose.glsl: the named draw (tables.SPRITE_DRAWS) of STREAM_SPRITE."""
    return random_unit(index, SPRITE_DRAWS[draw], seed * RANDOM_STREAMS["PER_SEED"] + RANDOM_STREAMS["SPRITE"])
