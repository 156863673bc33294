"""Flocking: Reynolds boids (1987) on the neighbour grid: separation, alignment and cohesion within a view radius
and cone, a target to seek and colliders to avoid, each as steering (a desired velocity minus the velocity, at most
the steering force), the speed at most the maximum."""

from __future__ import annotations

import math
from dataclasses import dataclass


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
