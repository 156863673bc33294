"""Flocking: Reynolds boids (1987) on the neighbour grid: separation, alignment and cohesion within a view radius
and cone, a target to seek and colliders to avoid, each as steering (a desired velocity minus the velocity, at most
the steering force), the speed at most the maximum.

A step (``FlockSolver.step``, after the simulate dispatch has moved every bird by its velocity and forces, and the
grid is built there): flock_steer, a thread a live entry of the grid, gathers each bird's neighbours in the grid's
fixed order from the grid's copies of positions and velocities (in cell order) and writes its new velocity to the
bird's slot of the state, the bird moved by the difference over the step.  The view radius is the interaction
radius.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..seam.kernels import Constant, Image, Kernel, Sampler
from ..seam.tables import SIZES
from ..settings.settings import EffectSettings
from .effectors import MAX_COLLIDERS, SDF_SAMPLING
from .neighbours import ENTRY_CONSTANTS, GRID_IMAGES, GRID_INCLUDES, GRID_VELOCITY, NeighbourGrid


@dataclass(frozen=True)
class FlockConstants:
    """What the boids kernel takes: Reynolds' three rules within a view cone, a target to seek, colliders to
    avoid, all as steering (desired velocity minus velocity, clamped to the steering force)."""

    view_radius: float
    view_cos: float  # cos of half the view angle: a neighbour counts when dot(heading, to neighbour) >= view_cos
    separation: float
    alignment: float
    cohesion: float
    seek: float  # weight of steering toward the target (0: no target)
    avoid: float  # weight of steering away from colliders
    avoid_distance: float  # colliders nearer than this are avoided, harder the nearer
    max_speed: float
    max_force: float  # steering acceleration at most


def flock_constants(view_radius: float, view_angle: float, separation: float = 1.5, alignment: float = 1.0,
                    cohesion: float = 1.0, seek: float = 0.0, avoid: float = 2.0, avoid_distance: float = 0.5,
                    max_speed: float = 5.0, max_force: float = 10.0) -> FlockConstants:
    """``view_angle``: the whole view cone's angle in radians (2 pi: all around)."""
    return FlockConstants(float(view_radius), math.cos(min(view_angle, 2.0 * math.pi) / 2.0), separation, alignment,
                          cohesion, seek, avoid, avoid_distance, max_speed, max_force)


def constants_of(settings: EffectSettings) -> FlockConstants:
    """The boids' constants of an effect's settings (interaction radius: the view radius; flock_*)."""
    return flock_constants(settings.interaction_radius, settings.flock_view_angle, settings.flock_separation,
                           settings.flock_alignment, settings.flock_cohesion, settings.flock_seek, settings.flock_avoid,
                           settings.flock_avoid_distance, settings.flock_max_speed, settings.flock_max_force)


FLOCK_STEER = Kernel(
    "flock_steer",
    images=(Image("pos_age", "RGBA32F"), Image("vel_life", "RGBA32F"), *GRID_IMAGES, GRID_VELOCITY),
    samplers=(Sampler("sdf_atlas", "FLOAT_3D"),),
    constants=(
        *ENTRY_CONSTANTS,
        Constant("INT", "collider_count"),
        Constant("VEC4", "colliders", MAX_COLLIDERS * SIZES["COLLIDER_ROWS"]),  # effectors.collider_rows
        Constant("VEC4", "flock_rules", components=(("flock_separation", "x"), ("flock_alignment", "y"),
                                                    ("flock_cohesion", "z"), ("flock_view_cos", "w"))),
        Constant("VEC4", "flock_motion", components=(("flock_max_speed", "x"), ("flock_max_force", "y"),
                                                     ("flock_dt", "z"), ("flock_seek", "w"))),
        Constant("VEC4", "flock_avoidance", components=(("flock_avoid", "x"), ("flock_avoid_distance", "y"))),
        Constant("VEC4", "flock_target", components=(("flock_target_position", "xyz"), ("flock_has_target", "w"))),
    ),
    includes=(*GRID_INCLUDES, "sdf_sample.glsl", "collider_surface.glsl"),
    defines=SDF_SAMPLING,
)
FLOCK_KERNELS = (FLOCK_STEER,)


def flock_values(c: FlockConstants, dt: float, target) -> dict:
    """FLOCK_STEER's flock_* components by name; ``target``: the world position to seek, or None."""
    return {"flock_separation": c.separation, "flock_alignment": c.alignment, "flock_cohesion": c.cohesion,
            "flock_view_cos": c.view_cos, "flock_max_speed": c.max_speed, "flock_max_force": c.max_force,
            "flock_dt": dt, "flock_seek": c.seek, "flock_avoid": c.avoid, "flock_avoid_distance": c.avoid_distance,
            "flock_target_position": (0.0, 0.0, 0.0) if target is None else tuple(map(float, target)),
            "flock_has_target": 0.0 if target is None else 1.0}


def flock_step(system, grid: NeighbourGrid, h: float, textures: dict, constants: dict) -> None:
    """Steer every bird of the simulated state (the grid built at it) for ``h`` seconds (interactions.STEPS); the
    target is the system's ``flock_target`` (the scene's Target object's position, or None)."""
    named = {**flock_values(constants_of(system.settings), h, system.flock_target),
             **grid.values, **{name: constants[name] for name in ("count", "collider_count", "colliders")}}
    grid.host.dispatch(FLOCK_STEER, grid.groups, {"pos_age": system.pos_age, "vel_life": system.vel_life,
                                                  **grid.textures, "grid_velocity": grid.velocity,
                                                  "sdf_atlas": textures["sdf_atlas"]},
                       FLOCK_STEER.pack({name: named[name] for name in FLOCK_STEER.value_names}))
