"""Position Based Fluids and Reynolds boids: the constants their kernels take, from an artist's settings.

Position Based Fluids (Macklin and Müller 2013) project each particle's predicted position so that the SPH density
(poly6 kernel, radius h = the interaction radius) stays at the rest density; the gradient uses the spiky kernel.
The rest density comes from the particle spacing (2 x size): the poly6 sum of a particle in a cubic lattice of that
spacing, itself included, so a lattice at that spacing is exactly at rest.  Every constant whose scale depends on h
(the relaxation epsilon, s_corr's strength) is given relative to the same lattice's constraint-gradient sum, so the
settings mean the same at any size.

A step (``fluid_step``, after the simulate dispatch has moved every particle by its forces and colliders, and
the grid is built at those predicted positions)::

    for each iteration:  fluid_lambda (density, lambda), fluid_delta (the corrected iterate, out of colliders)
    fluid_move           the last iterate into the state, the velocity the iterations make (own + move / dt)
                         into the state and, in entry order, into the grid's velocity image
    fluid_vorticity      omega, at the final positions (the last iterate)
    fluid_viscosity      XSPH and vorticity confinement: the new velocity into the state

The neighbours are found once a step, at the predicted positions (Macklin and Müller 2013, algorithm 1): the
velocity passes gather over the same lists at the final positions, where a pair now farther than h weighs 0 in
poly6 and spiky (and a pair that came within h is not met: the solver moves particles by a fraction of h).
Every pass runs a thread per live entry of the grid (cell order: a neighbour's data is read contiguously) and
keeps its iterates in entry order; fluid_move and fluid_viscosity write each entry's slot of the state (distinct
slots).  Every pass gathers in the grid's fixed order and writes its own entry only (Jacobi iterations, two
iterate images in turn), so a step is deterministic.  Nothing outlives the step: the state holds everything the
next one needs.

Colliders are walls of fluid at rest: a particle at distance d from a collider's surface gets a density in
proportion to the share of the poly6 kernel's mass beyond that surface (wall_fraction), and that term's gradient,
so fluid beside a wall is neither sparse nor sucked in; the proportion makes a lattice layer at distance ``size``
from a plane exactly at rest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from ..seam.kernels import Constant, Image, Kernel, Sampler
from ..seam.tables import SIZES
from ..settings.settings import EffectSettings
from .effectors import MAX_COLLIDERS, SDF_SAMPLING
from .neighbours import (
    ENTRY_CONSTANTS,
    ENTRY_IMAGES,
    GRID_IMAGES,
    GRID_INCLUDES,
    GRID_VELOCITY,
    NeighbourGrid,
)

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

    size: float  # the particles' radius: half the rest spacing
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


# Asked each substep (the lattice sums were a third of a 100K step's Python); bounded: a keyframed size or radius
# asks anew each frame.
@lru_cache(maxsize=256)
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
    return FluidConstants(float(size), h, poly6(0.0, 1.0) / h ** 9, -45.0 / (math.pi * h ** 6), rest, max(wall, 0.0),
                          relaxation * gradient_sum, tension / gradient_sum, 1.0 / poly6(SCORR_DISTANCE * h, h),
                          cohesion, viscosity, vorticity)


KERNEL_CONSTANTS = (
    *ENTRY_CONSTANTS,
    Constant("VEC4", "fluid_kernel", components=(("fluid_radius", "x"), ("fluid_poly6_scale", "y"),
                                                 ("fluid_spiky_scale", "z"), ("fluid_inverse_rest", "w"))),
)
# What the iterations read besides: the colliders (as walls, and to move out of), the constraint's terms.
SOLVER_CONSTANTS = (
    *KERNEL_CONSTANTS,
    Constant("INT", "collider_count"),
    Constant("VEC4", "colliders", MAX_COLLIDERS * SIZES["COLLIDER_ROWS"]),  # effectors.collider_rows
    Constant("VEC4", "fluid_terms", components=(("fluid_relaxation", "x"), ("fluid_scorr", "y"),
                                                ("fluid_scorr_inverse_w", "z"), ("fluid_cohesion", "w"))),
    Constant("VEC4", "fluid_wall", components=(("fluid_wall_density", "x"), ("fluid_size", "y"))),
)
# What the viscosity pass reads besides.
VELOCITY_CONSTANTS = (
    *KERNEL_CONSTANTS,
    Constant("VEC4", "fluid_motion", components=(("fluid_viscosity", "x"), ("fluid_vorticity", "y"),
                                                 ("fluid_dt", "z"))),
)
# Eight images at most a kernel (Blender's image units): lambda rides in the w of the iterate the lambda pass
# writes (the delta pass reads it there); the velocity passes read the final positions in the last iterate, the
# velocities fluid_move wrote in the grid's velocity image, and fluid_flow: two texels an entry side by side, what
# fluid_viscosity reads of a neighbour (velocity, |omega|) then its own omega.
STATE = (Image("pos_age", "RGBA32F"), Image("vel_life", "RGBA32F"))
ITERATE = Image("fluid_in", "RGBA32F", "READ")  # an iterate in entry order (the last: the final positions)


def _solver_kernel(name: str) -> Kernel:
    return Kernel(name, images=(*GRID_IMAGES, ITERATE, Image("fluid_out", "RGBA32F", "WRITE")),
                  samplers=(Sampler("sdf_atlas", "FLOAT_3D"),), constants=SOLVER_CONSTANTS,
                  includes=(*GRID_INCLUDES, "sdf_sample.glsl", "collider_surface.glsl", "fluid.glsl"),
                  defines=(*SDF_SAMPLING, ("FLUID_SOLVER", "1")))


FLUID_LAMBDA = _solver_kernel("fluid_lambda")
FLUID_DELTA = _solver_kernel("fluid_delta")
# The iterations' end: each live entry's last iterate and velocity (own + move / dt) into its slot of the state,
# the velocity also into the grid's velocity image in entry order (the velocity passes' neighbours).
FLUID_MOVE = Kernel("fluid_move", images=(*STATE, *ENTRY_IMAGES, ITERATE,
                                          Image("grid_velocity", "RGBA32F", "WRITE")),
                    constants=(*ENTRY_CONSTANTS, Constant("FLOAT", "fluid_inverse_dt")),
                    includes=("common.glsl", "grid_entry.glsl"))
FLUID_VORTICITY = Kernel("fluid_vorticity", images=(*GRID_IMAGES, ITERATE, GRID_VELOCITY,
                                                    Image("fluid_flow", "RGBA32F", "WRITE")),
                         constants=KERNEL_CONSTANTS, includes=(*GRID_INCLUDES, "fluid.glsl"))
# It stores the particle whole, its position unchanged.
FLUID_VISCOSITY = Kernel("fluid_viscosity", images=(*STATE, *GRID_IMAGES, ITERATE,
                                                    Image("fluid_flow", "RGBA32F", "READ")),
                         constants=VELOCITY_CONSTANTS, includes=(*GRID_INCLUDES, "fluid.glsl"))
FLUID_KERNELS = (FLUID_LAMBDA, FLUID_DELTA, FLUID_MOVE, FLUID_VORTICITY, FLUID_VISCOSITY)


def constants_of(settings: EffectSettings) -> FluidConstants:
    """The PBF constants of an effect's settings (size, interaction radius, fluid_*)."""
    return fluid_constants(settings.size, settings.interaction_radius, tension=settings.fluid_tension,
                           cohesion=settings.cohesion, viscosity=settings.fluid_viscosity,
                           vorticity=settings.fluid_vorticity)


def fluid_values(c: FluidConstants, dt: float) -> dict:
    """The fluid_* components of FLUID_CONSTANTS by name."""
    return {"fluid_radius": c.radius, "fluid_poly6_scale": c.poly6, "fluid_spiky_scale": c.spiky,
            "fluid_inverse_rest": 1.0 / c.rest_density, "fluid_relaxation": c.relaxation, "fluid_scorr": c.scorr,
            "fluid_scorr_inverse_w": c.scorr_inverse_w, "fluid_cohesion": c.cohesion, "fluid_viscosity": c.viscosity,
            "fluid_vorticity": c.vorticity, "fluid_dt": dt, "fluid_inverse_dt": 1.0 / dt,
            "fluid_wall_density": c.wall_density, "fluid_size": c.size}


def fluid_step(system, grid: NeighbourGrid, h: float, textures: dict, constants: dict) -> None:
    """One PBF step of ``h`` seconds on the simulated (predicted) state, the grid built at it (interactions.STEPS):
    two images of the effect's scratch in entry order, the solved iterate and the one lambda rides in (the first
    iteration starts from the grid's positions), and the velocity passes' fluid_flow (two texels an entry)."""
    settings = system.settings
    solved, lambdas = system.interactions.scratch(("fluid_solved", "fluid_lambda"))
    (flow,) = system.interactions.scratch(("fluid_flow",), texels=2)
    named = {**fluid_values(constants_of(settings), h), **grid.values,
             **{name: constants[name] for name in ("collider_count", "colliders")}}
    pool = {"pos_age": system.pos_age, "vel_life": system.vel_life, "sdf_atlas": textures["sdf_atlas"],
            "grid_velocity": grid.velocity, "fluid_flow": flow, **grid.textures}

    packed = {}  # by kernel: the iterations' kernels take the same constants each time

    def run(kernel: Kernel, **images) -> None:
        pool.update(images)
        bound = {name: pool[name] for name in (*(i.name for i in kernel.images), *(s.name for s in kernel.samplers))}
        if kernel not in packed:
            packed[kernel] = kernel.pack({n: named[n] for n in kernel.value_names})
        grid.host.dispatch(kernel, grid.groups, bound, packed[kernel])

    current = grid.sorted
    for _ in range(settings.iterations):
        run(FLUID_LAMBDA, fluid_in=current, fluid_out=lambdas)
        run(FLUID_DELTA, fluid_in=lambdas, fluid_out=solved)
        current = solved
    run(FLUID_MOVE, fluid_in=current)
    run(FLUID_VORTICITY, fluid_in=current)
    run(FLUID_VISCOSITY, fluid_in=current)
