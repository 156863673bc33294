"""The per-frame recording: which kernel runs when, over what, with which constants.

Reads like the algorithm::

    system.reset()                      # init_particles
    system.step(dt, emitter_prev, cur)  # simulate, once per substep
    compositor.splat(system, camera)    # splat, once per effect
    frame = compositor.resolve()        # resolve (and clear)

Everything here talks to a :class:`addon.hosts.base.Host`, so the same
recording runs in Blender and, for benchmarks, under moderngl.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import kernels
from .settings import EffectSettings, RenderSettings, check_for_gpu

# Integer range of each packed channel: R and B have 21 bits, G has 22.
CHANNEL_MAX = np.array([(1 << 21) - 1, (1 << 22) - 1, (1 << 21) - 1], dtype=np.float64)
STATE_ROW_MULTIPLE = kernels.SIMULATE.local_size[0]
SHAPES = {"POINT": 0.0, "SPHERE": 1.0}


def state_size(count: int, max_texture_size: int) -> tuple[int, int]:
    """Width and rows of the state images: a power-of-two width (>= one workgroup), square-ish."""
    width = STATE_ROW_MULTIPLE
    while width * width < count and width < max_texture_size:
        width *= 2
    return width, max(1, -(-count // width))


@dataclass(frozen=True)
class Camera:
    """What the splat needs from a camera: world to clip, and pixels per unit at w = 1."""

    view_proj: np.ndarray  # 4x4, row-major, OpenGL clip conventions
    width: int
    height: int

    @property
    def pixels_per_unit(self) -> float:
        """Projected size scale: a radius r at clip w covers r * this / w pixels."""
        return float(np.linalg.norm(self.view_proj[1, :3])) * self.height / 2


def perspective(fov_y: float, aspect: float, near: float, far: float) -> np.ndarray:
    f = 1.0 / math.tan(fov_y / 2)
    return np.array(
        [[f / aspect, 0, 0, 0], [0, f, 0, 0],
         [0, 0, (far + near) / (near - far), 2 * far * near / (near - far)], [0, 0, -1, 0]],
        dtype=np.float64,
    )


def look_at(eye, target, up=(0.0, 0.0, 1.0)) -> np.ndarray:
    """World to view matrix of a camera at ``eye`` looking at ``target`` (Blender's -Z forward)."""
    eye, target, up = (np.asarray(v, dtype=np.float64) for v in (eye, target, up))
    forward = target - eye
    forward /= np.linalg.norm(forward)
    right = np.cross(forward, up)
    right /= np.linalg.norm(right)
    true_up = np.cross(right, forward)
    view = np.identity(4)
    view[0, :3], view[1, :3], view[2, :3] = right, true_up, -forward
    view[:3, 3] = -view[:3, :3] @ eye
    return view


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
        self.step_index = 0
        self.reset()

    @property
    def textures(self) -> dict:
        return {"pos_age": self.pos_age, "vel_life": self.vel_life}

    @property
    def groups(self) -> tuple[int, int, int]:
        return kernels.SIMULATE.groups_for(self.pos_age.width, self.pos_age.height)

    def reset(self) -> None:
        self.step_index = 0
        self.host.dispatch(
            kernels.INIT_PARTICLES, self.groups, self.textures,
            {"count": self.count, "birth_interval": birth_interval(self.settings)},
        )

    def step(self, dt: float, emitter_prev: np.ndarray, emitter_cur: np.ndarray) -> None:
        """Advance one frame of ``dt`` seconds in ``substeps`` simulate dispatches.

        The emitter's matrix is interpolated linearly across substeps.
        """
        substeps = self.settings.substeps
        h = dt / substeps
        prev = np.asarray(emitter_prev, dtype=np.float64)
        cur = np.asarray(emitter_cur, dtype=np.float64)
        for k in range(substeps):
            start = prev + (cur - prev) * (k / substeps)
            end = prev + (cur - prev) * ((k + 1) / substeps)
            constants = emitter_constants(self.settings, h, self.step_index, self.count, start, end)
            self.host.dispatch(kernels.SIMULATE, self.groups, self.textures, constants)
            self.step_index += 1

    def read_state(self) -> tuple[np.ndarray, np.ndarray]:
        """(pos_age, vel_life) of the live slots as (count, 4) float32 arrays."""
        return tuple(self.host.read(t).reshape(-1, 4)[: self.count] for t in (self.pos_age, self.vel_life))


def quantize_scale(emax: float) -> np.ndarray:
    """Imax / Emax per channel, as float32 (what the kernel multiplies by)."""
    return (CHANNEL_MAX / emax).astype(np.float32)


def dequantize_scale(emax: float) -> np.ndarray:
    return (emax / CHANNEL_MAX).astype(np.float32)


class Compositor:
    """The atomic splat target: two R32UI accumulation images and a float frame."""

    def __init__(self, host, width: int, height: int, render: RenderSettings):
        if width > host.max_texture_size or height > host.max_texture_size:
            raise ValueError(f"resolution {width}x{height} is beyond this GPU's texture limit of {host.max_texture_size}")
        self.host = host
        self.width, self.height = width, height
        self.render = render
        self.accum_hi = host.texture("accum_hi", width, height, "R32UI")
        self.accum_lo = host.texture("accum_lo", width, height, "R32UI")
        self.frame = host.texture("frame", width, height, "RGBA32F")
        self.stats = host.texture("stats", 1, 1, "R32UI")

    def splat(self, system: ParticleSystem, camera: Camera) -> None:
        s = system.settings
        q = quantize_scale(self.render.emax)
        self.host.dispatch(
            kernels.SPLAT, system.groups,
            {**system.textures, "accum_hi": self.accum_hi, "accum_lo": self.accum_lo, "stats": self.stats},
            {
                "count": system.count,
                "target_size": (self.width, self.height),
                "view_proj": camera.view_proj,
                "color_start": (*s.color_start, s.emission_strength),
                "color_end": (*s.color_end, s.size),
                "quantize": (*q, camera.pixels_per_unit),
            },
        )

    def resolve(self) -> None:
        self.host.dispatch(
            kernels.RESOLVE, kernels.RESOLVE.groups_for(self.width, self.height),
            {"accum_hi": self.accum_hi, "accum_lo": self.accum_lo, "frame": self.frame},
            {"target_size": (self.width, self.height), "dequantize": (*dequantize_scale(self.render.emax), 0.0)},
        )

    def read_frame(self) -> np.ndarray:
        return self.host.read(self.frame)

    def take_overflow_count(self) -> int:
        """Overflowing atomic adds since the last call (the UI shows it), then reset."""
        count = int(self.host.read(self.stats)[0, 0])
        self.host.clear(self.stats)
        return count
