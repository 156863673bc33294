"""The ``interactions`` suite of bench/blender_gpu.py (issue 46): ms per simulation step of particles that act on
each other, the neighbour grid included, inside Blender on the GPU.

Blender 5.2's Python API has no GPU timer: each figure is many repetitions of the same GPU work between two
drains (a readback of one texel, which returns only once every command before it has run), divided by the
repetitions.  Where the step's time goes is measured the same way, part by part, on the same state:

* ``grid_ms``: the neighbour grid (in a step case its whole build, the lists included): ``keys_ms`` (grid_keys), ``sort_ms`` (the counting sort's digit
  passes, three of bin_digits, a scan and bin_scatter for the 2^22 + 1 bins of 4M particles, then bin_ranges),
  ``order_ms`` (grid_order: positions copied into cell order; ``order_velocity_ms`` with the velocities,
  as grains and flocks have it); ``build_ms`` adds ``list_ms`` (grid_neighbours:
  the walk of every particle's 27 cells that lists its neighbours for the step's gathers);
* ``simulate_ms``: the simulate pass alone (forces, colliders), as an effect without interaction steps;
* ``iteration_ms``: one granular_solve iteration; ``settle_ms``: the rest of the step (the GRAINS pass).

Fluid and flocking steps (bench/interaction_peers.py) add ``ms <kernel>``, each kernel's share of one more step
drained around every dispatch, and ``neighbours_mean``; ``fluid-vs-blender`` and ``flocking-vs-blender`` time
a frame of ours against Blender's own particle physics (SPH fluid, boids) in the same run (``ms_per_frame``,
``peer_ms_per_frame``, ``speedup``).

``CASES`` is the table: each case a name, a count, the effect's settings and the function measuring it (here
``grid_case`` and ``step_case``); further interactions append theirs (``--quick`` divides counts by 100).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np

from addon.engine.settings.settings import effect_settings
from addon.engine.simulate import granular
from addon.engine.simulate.effectors import Collider
from addon.engine.simulate.simulation import ParticleSystem
from bench.interaction_peers import drain, kernel_ms, peer_case

QUICK_COUNT_SCALE = 100
GRAIN = 0.005  # grain radius of the cases (m)
# Layers of a step case's block: a settled heap's depth, which the cases' iterations hold.  A block as deep as it
# is wide (50 layers of 1M) sank at free fall under its own weight (4 Jacobi iterations carry a correction a
# few grains down a step): over the repetitions its bottom was crushed, grains inside grains (granular-1M
# counted 35M overflows, fluid-1M 39 neighbours a particle where the lattice has 26).
STEP_LAYERS = 10


@dataclass(frozen=True)
class Case:
    name: str
    count: int
    values: dict = field(default_factory=dict)  # effect settings
    measure: str = "step"  # "grid", "step" or "peer"


CASES: list[Case] = [
    Case("grid-4M", 4_000_000, {"interaction": "FLUID", "interaction_radius": 4 * GRAIN}, "grid"),
    Case("granular-1M", 1_000_000, {"interaction": "GRANULAR", "interaction_radius": 2.5 * GRAIN, "size": GRAIN,
                                    "friction": 0.6, "iterations": 4}),
    # A block of fluid at rest (goal <= 6 ms), a flock of birds on the same lattice (goal <= 2 ms), each with
    # its kernels' shares; then each against Blender's own particle physics (interaction_peers.py).  Radius over
    # size as the presets have it (sand_pile 2.5, water_splash 4; murmuration's 20 on its birth density would put
    # some 330 birds in each one's view, beyond MAX_NEIGHBOURS: the flock takes the fluid's 4), at the spacing
    # grains and fluid rest at (2 x size, jittered: 2.02).
    Case("fluid-1M", 1_000_000, {"interaction": "FLUID", "interaction_radius": 4 * GRAIN, "size": GRAIN,
                                 "iterations": 4}),
    Case("flocking-1M", 1_000_000, {"interaction": "FLOCKING", "interaction_radius": 4 * GRAIN, "size": GRAIN,
                                    "gravity": (0.0, 0.0, 0.0)}),
    Case("fluid-vs-blender", 100_000, {"interaction": "FLUID"}, "peer"),
    Case("flocking-vs-blender", 100_000, {"interaction": "FLOCKING"}, "peer"),
]


def block(count: int, spacing: float, layers: int | None = None) -> np.ndarray:
    """``count`` positions on a cubic lattice of ``spacing``, a square block of ``layers`` (default: half its
    width) resting on z = 0, jittered by a hundredth of the spacing (a settled heap's density, not a grid-aligned
    one)."""
    side = int(np.ceil(np.sqrt(count / (layers or max(1, int(np.cbrt(count)) // 2)))))
    index = np.arange(count)
    lattice = np.stack([index % side, (index // side) % side, index // (side * side)], axis=1).astype(np.float64)
    jitter = np.random.default_rng(0).uniform(-0.01, 0.01, (count, 3))
    points = (lattice + jitter) * spacing
    points[:, :2] -= (side - 1) * spacing / 2
    points[:, 2] += spacing / 2
    return points.astype(np.float32)


def system_with(host, count: int, values: dict, spacing: float, layers: int | None = None) -> ParticleSystem:
    settings = effect_settings({"count": count, "emission": "BURST", "lifetime": 1e3, "lifetime_random": 0.0,
                                "velocity": (0, 0, 0), "velocity_random": 0.0, "drag": 0.0, **values})
    system = ParticleSystem(host, settings)
    pos_age = np.zeros((count, 4), np.float32)
    pos_age[:, :3] = block(count, spacing, layers)
    vel_life = np.zeros((count, 4), np.float32)
    vel_life[:, 3] = 1e3
    system.write_state(pos_age, vel_life)
    identity = np.eye(4)
    system.set_scene_inputs([], [Collider("PLANE", identity, half_size=(1e3, 1e3, 0), bounce=0.0, friction=0.6)])
    return system


def timed_ms(host, written, work, repeats: int) -> float:
    """ms of one ``work()`` on the GPU: ``repeats`` of them between two drains of ``written`` (one warm-up first)."""
    work()
    drain(host, written)
    started = time.perf_counter()
    for _ in range(repeats):
        work()
    drain(host, written)
    return (time.perf_counter() - started) * 1e3 / repeats


def grid_case(host, case: Case, count: int, repeats: int) -> dict:
    """The neighbour grid of ``count`` particles, about 33 within each one's radius (spacing radius / 2): ``ms``
    the grid the gathers read, the slots ordered by cell with each bin's range (keys, sort, order); ``build_ms``
    with the lists (``list_ms``) that each step's gathers then read instead of walking the cells."""
    radius = case.values["interaction_radius"]
    system = system_with(host, count, case.values, radius / 2)
    grid = system.interactions.grid

    def ordered():
        grid.write_keys(system.pos_age, system.vel_life, radius)
        grid.sort()
        grid.order(system.pos_age, system.vel_life, False)

    ordering = timed_ms(host, grid.sorted, ordered, repeats)
    build = timed_ms(host, grid.counts, lambda: grid.build(system.pos_age, system.vel_life, radius, False), repeats)
    keys = timed_ms(host, grid.keys, lambda: grid.write_keys(system.pos_age, system.vel_life, radius), repeats)
    sort = timed_ms(host, grid.binning.items, grid.sort, repeats)
    order = timed_ms(host, grid.sorted, lambda: grid.order(system.pos_age, system.vel_life, False), repeats)
    velocities = timed_ms(host, grid.velocity, lambda: grid.order(system.pos_age, system.vel_life), repeats)
    listed = timed_ms(host, grid.counts, grid.list_neighbours, repeats)
    found = grid.neighbour_lists(1)[:, 0]
    return {"ms": ordering, "grid_ms": ordering, "build_ms": build, "keys_ms": keys, "sort_ms": sort, "order_ms": order,
            "order_velocity_ms": velocities, "list_ms": listed,
            "neighbours_mean": float(found.mean()), "table": grid.table, "overflow": grid.read_overflow()}


def step_case(host, case: Case, count: int, repeats: int) -> dict:
    """Whole simulation steps (one substep each: simulate, grid, the interaction) of a settled block, then its
    parts alone on the same state.  ``overflow``: particles a step that had more than MAX_NEIGHBOURS within the
    radius (the whole steps' count over their number)."""
    spacing = 2.02 * case.values["size"]
    system = system_with(host, count, case.values, spacing, STEP_LAYERS)
    identity = np.eye(4)
    h = 1 / 96
    whole = timed_ms(host, system.pos_age, lambda: system.step(h, identity, identity), repeats)
    grid = system.interactions.grid
    overflow = grid.read_overflow() / (repeats + 1)
    parts = {"grid_ms": timed_ms(host, grid.sorted, lambda: grid.build(
        system.pos_age, system.vel_life, system.settings.interaction_radius), repeats)}
    alone = system_with(host, count, {**case.values, "interaction": "NONE"}, spacing, STEP_LAYERS)
    parts["simulate_ms"] = timed_ms(host, alone.pos_age, lambda: alone.step(h, identity, identity), repeats)
    if system.settings.interaction == "GRANULAR":
        one = replace(system.settings, iterations=1)
        iterates = system.interactions.scratch(("grain_a", "grain_b"), texels=2)
        parts["iteration_ms"] = timed_ms(host, iterates[1], lambda: granular.solve(
            host, grid, iterates, one, h), repeats)
        parts["settle_ms"] = timed_ms(host, system.pos_age, settle_pass(system, h), repeats)
    if system.settings.interaction in ("FLUID", "FLOCKING"):
        parts.update(kernel_ms(host, system, h))
    return {"ms": whole, **parts, "iterations": system.settings.iterations, "overflow": overflow}


def settle_pass(system, h: float):
    """The settle pass of one step of ``system``, as the step dispatches it (its textures and constants caught
    from a step)."""
    caught = {}
    settle = system.settle
    system.settle = lambda textures, constants: caught.update(textures=textures, constants=constants)
    system.step(h, np.eye(4), np.eye(4))
    system.settle = settle
    return lambda: settle(caught["textures"], caught["constants"])


MEASURES = {"grid": grid_case, "step": step_case, "peer": peer_case}


def suite(host, quick: bool, repeats: int, log=print) -> list[dict]:
    """Every case of CASES, measured (``quick``: counts / QUICK_COUNT_SCALE)."""
    rows = []
    for case in CASES:
        count = case.count // QUICK_COUNT_SCALE if quick else case.count
        name = case.name if not quick else f"{case.name}-quick"
        log(f"interactions {name}: {count:,} particles, {repeats} repetitions a figure")
        rows.append({"case": name, "n": count, **MEASURES[case.measure](host, case, count, repeats),
                     **{k: v for k, v in case.values.items() if not isinstance(v, tuple)}})
    return rows
