"""Particle simulation on the GPU: state images, emission, forces, integration.

Particle i lives at texel (i % width, i / width) of two RGBA32F images:

=========  ==========================================  =====================================
image      xyz                                         w
=========  ==========================================  =====================================
pos_age    position, world units                       age in seconds; negative: not born yet
vel_life   velocity, world units per second            lifetime in seconds; 0: never born,
                                                       negative: died and will not respawn
=========  ==========================================  =====================================
"""

from __future__ import annotations

import numpy as np

from .compaction import LiveParticles
from .kernels import Constant, Image, Kernel
from .settings import EffectSettings, check_for_gpu

STATE_ROW_MULTIPLE = 256  # state image widths are multiples of one simulate workgroup
SHAPES = {"POINT": 0.0, "SPHERE": 1.0}

STATE_IMAGES = (Image("pos_age", "RGBA32F"), Image("vel_life", "RGBA32F"))
STATE_READ = (Image("pos_age", "RGBA32F", "READ"), Image("vel_life", "RGBA32F", "READ"))
INIT_PARTICLES = Kernel(
    "init_particles",
    images=STATE_IMAGES,
    constants=(
        Constant("INT", "count"),
        Constant("FLOAT", "birth_interval"),
    ),
)

SIMULATE = Kernel(
    "simulate",
    images=STATE_IMAGES,
    constants=(
        Constant("INT", "count"),
        Constant("INT", "step_index"),
        Constant("INT", "seed"),
        Constant("INT", "flags"),
        Constant("FLOAT", "dt"),
        Constant("MAT4", "emitter_prev"),
        Constant("MAT4", "emitter_cur"),
        Constant("VEC4", "emit_shape"),  # x: shape id, y: radius, z: inherit, w: unused
        Constant("VEC4", "emit_velocity"),  # xyz: velocity, w: random speed
        Constant("VEC4", "lifetime_range"),  # x: lifetime, y: random fraction
        Constant("VEC4", "gravity_drag"),  # xyz: gravity, w: drag
    ),
    includes=("common.glsl", "random.glsl"),
)


def state_size(count: int, max_texture_size: int) -> tuple[int, int]:
    """Width and rows of the state images: a power-of-two width (>= one workgroup), square-ish."""
    width = STATE_ROW_MULTIPLE
    while width * width < count and width < max_texture_size:
        width *= 2
    return width, max(1, -(-count // width))


def emitter_constants(settings: EffectSettings, dt: float, step_index: int, count: int,
                      emitter_prev: np.ndarray, emitter_cur: np.ndarray) -> dict:
    s = settings
    return {
        "count": count,
        "step_index": step_index,
        "seed": s.seed,
        "flags": 1 if s.emission == "CONTINUOUS" else 0,
        "dt": dt,
        "emitter_prev": emitter_prev,
        "emitter_cur": emitter_cur,
        "emit_shape": (SHAPES[s.emitter_shape], s.emitter_radius, s.inherit_velocity, 0.0),
        "emit_velocity": (*s.velocity, s.velocity_random),
        "lifetime_range": (s.lifetime, s.lifetime_random, 0.0, 0.0),
        "gravity_drag": (*s.gravity, s.drag),
    }


def birth_interval(settings: EffectSettings) -> float:
    """Seconds between slot births: one lifetime spread over all slots, or a burst."""
    return settings.lifetime / settings.count if settings.emission == "CONTINUOUS" else 0.0


class ParticleSystem:
    """One effect's particle state on the GPU and the steps that advance it."""

    def __init__(self, host, settings: EffectSettings):
        check_for_gpu(settings, host.max_texture_size)
        self.host = host
        self.settings = settings
        self.count = settings.count
        width, rows = state_size(settings.count, host.max_texture_size)
        self.pos_age = host.texture("pos_age", width, rows, "RGBA32F")
        self.vel_life = host.texture("vel_life", width, rows, "RGBA32F")
        self.live = LiveParticles(host, width, rows, self.count)
        self.step_index = 0
        self.reset()

    @property
    def textures(self) -> dict:
        return {"pos_age": self.pos_age, "vel_life": self.vel_life}

    @property
    def groups(self) -> tuple[int, int, int]:
        return SIMULATE.groups_for(self.pos_age.width, self.pos_age.height)

    def reset(self) -> None:
        self.step_index = 0
        self.host.dispatch(
            INIT_PARTICLES, self.groups, self.textures,
            {"count": self.count, "birth_interval": birth_interval(self.settings)},
        )
        self.live.compact(self.textures)

    def step(self, dt: float, emitter_prev: np.ndarray, emitter_cur: np.ndarray) -> None:
        """Advance one frame of ``dt`` seconds in ``substeps`` simulate dispatches.

        The emitter's matrix is interpolated linearly across substeps; the live
        slots are compacted once per frame (``compaction.py``).
        """
        substeps = self.settings.substeps
        h = dt / substeps
        prev = np.asarray(emitter_prev, dtype=np.float64)
        cur = np.asarray(emitter_cur, dtype=np.float64)
        for k in range(substeps):
            start = prev + (cur - prev) * (k / substeps)
            end = prev + (cur - prev) * ((k + 1) / substeps)
            constants = emitter_constants(self.settings, h, self.step_index, self.count, start, end)
            self.host.dispatch(SIMULATE, self.groups, self.textures, constants)
            self.step_index += 1
        self.live.compact(self.textures)

    def read_state(self) -> tuple[np.ndarray, np.ndarray]:
        """(pos_age, vel_life) of the live slots as (count, 4) float32 arrays."""
        return tuple(self.host.read(t).reshape(-1, 4)[: self.count] for t in (self.pos_age, self.vel_life))
