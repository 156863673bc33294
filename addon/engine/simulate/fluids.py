"""Position Based Fluids and Reynolds boids: the constants their kernels take, from an artist's settings.

Position Based Fluids (Macklin and Müller 2013) project each particle's predicted position so that the SPH density
(poly6 kernel, radius h = the interaction radius) stays at the rest density; the gradient uses the spiky kernel.
The rest density comes from the particle spacing (2 x size): the poly6 sum of a particle in a cubic lattice of that
spacing, itself included, so a lattice at that spacing is exactly at rest.  Every constant whose scale depends on h
(the relaxation epsilon, s_corr's strength) is given relative to the same lattice's constraint-gradient sum, so the
settings mean the same at any size.

Colliders are walls of fluid at rest: a particle at distance d from a collider's surface gets a density in
proportion to the share of the poly6 kernel's mass beyond that surface (wall_fraction), and that term's gradient,
so fluid beside a wall is neither sparse nor sucked in; the proportion makes a lattice layer at distance ``size``
from a plane exactly at rest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

SCORR_POWER = 4  # s_corr's exponent n (the paper's 4)
SCORR_DISTANCE = 0.2  # s_corr's reference distance dq as a fraction of h (the paper: 0.1 to 0.3)


def poly6(r: float, h: float) -> float:
    return 315.0 / (64.0 * math.pi * h ** 9) * (h * h - r * r) ** 3 if r < h else 0.0


def spiky_slope(r: float, h: float) -> float:
    """dW/dr of the spiky kernel (negative inside h)."""
    return -45.0 / (math.pi * h ** 6) * (h - r) ** 2 if r < h else 0.0


def lattice_offsets(spacing: float, h: float, layers: int | None = None) -> list[float]:
    """Distances to every other point of a cubic lattice of ``spacing`` within h (``layers``: only those of the
    first so many layers from the point's own, upward)."""
    reach = int(h / spacing) + 1
    return [d for i in range(-reach, reach + 1) for j in range(-reach, reach + 1)
            for k in range(0 if layers else -reach, layers or reach + 1)
            if 0.0 < (d := spacing * math.sqrt(i * i + j * j + k * k)) < h]


def wall_fraction(q: float) -> float:
    """The share of the poly6 kernel's mass beyond a plane at q h: (315 / 256) integral of (1 - t^2)^4, q to 1."""
    return 0.5 - 315.0 / 256.0 * (q - 4.0 * q ** 3 / 3.0 + 6.0 * q ** 5 / 5.0 - 4.0 * q ** 7 / 7.0 + q ** 9 / 9.0)


@dataclass(frozen=True)
class FluidConstants:
    """What the PBF kernels take (float uniforms): kernel coefficients and the rest state's scales."""

    radius: float  # h, the interaction radius
    poly6: float  # 315 / (64 pi h^9)
    spiky: float  # -45 / (pi h^6): dW/dr = spiky (h - r)^2
    rest_density: float  # rho0 (particle mass 1)
    wall_density: float  # a collider's density at its surface, twice the continuous wall's half (wall_fraction)
    relaxation: float  # epsilon in lambda's denominator, absolute
    scorr: float  # s_corr = -scorr (W(r) / W(dq))^n, absolute (lambda's units)
    scorr_inverse_w: float  # 1 / W(dq)
    cohesion: float  # how much a sparse neighbourhood pulls together (the density constraint's weight below rest)
    viscosity: float  # XSPH c: v += c sum (v_j - v_i) W_ij / rho0
    vorticity: float  # confinement: v += dt vorticity h (N x omega)


def fluid_constants(size: float, radius: float, relaxation: float = 0.01, tension: float = 0.1,
                    cohesion: float = 0.0, viscosity: float = 0.01, vorticity: float = 0.0) -> FluidConstants:
    """The PBF constants of particles of radius ``size`` interacting within ``radius``.  ``relaxation`` and
    ``tension`` (s_corr's k) are fractions of the rest lattice's constraint-gradient sum, so that ``tension`` 0.1
    pushes a pair at dq apart like a 10% density excess would."""
    h = float(radius)
    spacing = 2.0 * float(size)
    offsets = lattice_offsets(spacing, h)
    rest = poly6(0.0, h) + sum(poly6(d, h) for d in offsets)
    gradient_sum = sum(spiky_slope(d, h) ** 2 for d in offsets) / (rest * rest)  # the lattice's sum |grad C|^2
    if gradient_sum <= 0.0:
        gradient_sum = spiky_slope(0.5 * h, h) ** 2 / (rest * rest)  # spacing >= h: no lattice neighbour
    own_side = poly6(0.0, h) + sum(poly6(d, h) for d in lattice_offsets(spacing, h, int(h / spacing) + 1))
    wall = (rest - own_side) / max(wall_fraction(size / h), 1e-9)  # a lattice layer on a wall is at rest
    return FluidConstants(h, poly6(0.0, 1.0) / h ** 9, -45.0 / (math.pi * h ** 6), rest, max(wall, 0.0),
                          relaxation * gradient_sum, tension / gradient_sum, 1.0 / poly6(SCORR_DISTANCE * h, h),
                          cohesion, viscosity, vorticity)


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
