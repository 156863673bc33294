"""Granular effects (interaction GRANULAR): grains of the effect's size as position-based contacts.

Macklin et al. 2014, "Unified Particle Physics for Real-Time Applications": after the simulate pass has
predicted every grain's position (forces, colliders, events), each substep runs::

    grid.build(pos_age)                                # neighbours.py, on the predicted positions
    for k in range(iterations):                        # Jacobi, ping-pong between two iterates
        granular_solve(iterate k -> iterate k + 1)     # contacts, friction, cohesion: averaged, gathered
    simulate, GRAINS variant (last iterate -> state)   # velocity from the position change, colliders again

granular_solve runs a thread per entry of the grid (cell order) and reads the grid's copies of the predicted
positions and velocities; its iterates are in entry order but for the last, which it writes by slot for the
settle pass.

Determinism: every grain sums its own corrections in the grid's fixed neighbour order; no float atomics.  The
iterates live for one substep only, so checkpoints and the disk cache need nothing more than the state.
"""

from __future__ import annotations

from ..seam.kernels import Constant, Image, Kernel
from ..settings.settings import EffectSettings, SettingsError
from .neighbours import ENTRY_CONSTANTS, GRID_IMAGES, GRID_INCLUDES, GRID_VELOCITY

RELAXATION = 1.0  # of the averaged corrections (Macklin et al. 2014: 1 to 2; above 1 piles jitter here)
DYNAMIC_FRICTION = 0.8  # dynamic friction as a fraction of the static (the effect's friction)

GRANULAR_SOLVE = Kernel(
    "granular_solve",
    images=(Image("grain_in", "RGBA32F", "READ"), Image("grain_out", "RGBA32F", "WRITE"), *GRID_IMAGES,
            GRID_VELOCITY),
    constants=(
        Constant("INT", "count"), *ENTRY_CONSTANTS,
        Constant("VEC4", "grain", components=(("grain_radius", "x"), ("static_friction", "y"),
                                              ("dynamic_friction", "z"), ("cohesion", "w"))),
        Constant("VEC4", "grain_step", components=(("grain_dt", "x"), ("mass_scaling", "y"), ("relaxation", "z"),
                                                   ("first_iteration", "w"))),
        Constant("VEC4", "grain_pass", components=(("pre_stabilising", "x"), ("last_iteration", "y"))),
        Constant("VEC4", "grain_direction", components=(("grain_up", "xyz"),)),  # against gravity
        Constant("VEC4", "grain_gravity", components=(("grain_fall", "xyz"),)),  # gravity x dt^2
    ),
    includes=GRID_INCLUDES,
)
GRANULAR_KERNELS = (GRANULAR_SOLVE,)


def check_granular(settings: EffectSettings) -> None:
    if settings.interaction == "GRANULAR" and settings.interaction_radius < 2.0 * settings.size:
        raise SettingsError(f"interaction_radius {settings.interaction_radius:g} is less than twice the size "
                            f"({2.0 * settings.size:g}): grains touch at twice their size, so they would pass "
                            "through each other; raise the Interaction Radius")


def up(gravity) -> tuple[float, float, float]:
    """The direction a pile grows: against gravity, or +z without gravity."""
    g = [float(v) for v in gravity]
    norm = sum(v * v for v in g) ** 0.5
    return (0.0, 0.0, 1.0) if norm == 0 else tuple(-v / norm for v in g)


def solve_values(settings: EffectSettings, h: float) -> dict:
    """granular_solve's own constants for a step of ``h`` seconds (the grid's and ``first_iteration`` aside)."""
    return {"grain_radius": settings.size, "static_friction": settings.friction,
            "dynamic_friction": settings.friction * DYNAMIC_FRICTION, "cohesion": settings.cohesion,
            "grain_dt": h, "mass_scaling": 1.0 / settings.size, "relaxation": RELAXATION,
            "grain_up": up(settings.gravity), "grain_fall": tuple(g * h * h for g in settings.gravity)}


def pre_stabilising(iterations: int) -> int:
    """The first iterations that pre-stabilise (a third, at least one; the rest solve the step's contacts)."""
    return max(1, iterations // 3)


def solve(host, grid, iterates: tuple, settings: EffectSettings, h: float):
    """The contact iterations from the predicted positions (the grid's), between two iterates (two texels a grain,
    side by side: its position, then the part of its move that carries no velocity); the iterate holding the
    result, by slot."""
    values = {"count": settings.count, "grid_table": grid.table, **solve_values(settings, h)}
    source, target = iterates
    for k in range(settings.iterations):
        constants = GRANULAR_SOLVE.pack({**values, "first_iteration": float(k == 0),
                                         "pre_stabilising": float(k < pre_stabilising(settings.iterations)),
                                         "last_iteration": float(k == settings.iterations - 1)})
        host.dispatch(GRANULAR_SOLVE, grid.groups, {"grain_in": source, "grain_out": target, **grid.textures,
                                                    "grid_velocity": grid.velocity}, constants)
        source, target = target, source
    return source


def granular_step(system, grid, h: float, textures: dict, constants: dict) -> None:
    """The contacts of this substep's predicted grains, then the settle pass (simulate's GRAINS variant)."""
    interactions = system.interactions
    interactions.settled = solve(system.host, grid, interactions.scratch(("grain_a", "grain_b"), texels=2),
                                 system.settings, h)
    system.settle(textures, constants)
