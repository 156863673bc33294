"""Reference of the sub-emitter kernels (spawn_count.glsl, spawn_events.glsl, spawn_tint.glsl, spawn_cursor.glsl)
and of ``events.step_family``, in the kernels' float32 order."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...look.look import color_t, inherits_color, look_at, look_table
from ...seam.records import PARTICLE
from ...seam.tables import EMITTER_SHAPES, SPAWN_EVENTS
from ...seam.tables import RANDOM_STREAMS as STREAM
from ...simulate.events import MAX_RATE_EVENTS, SPAWN_EVENTS_KERNELS, spawn_constants
from ...simulate.simulation import simulate_constants, state_origin
from ..seam.random import random_direction, random_unit
from .simulation import Clock, Inputs, box_point, init_particles, inputs_for, random_in_cone, simulate, store

F = np.float32
U = np.uint32


def spawn_counts(events: dict, parent_pos_age, parent_vel_life, c) -> np.ndarray:
    """spawn_count.glsl: births per parent slot (uint32)."""
    on = c["spawn_on"]
    if on == SPAWN_EVENTS["DEATH"]:
        n = (events["event_position"][:, 3] >= 0).astype(U)
    elif on == SPAWN_EVENTS["COLLISION"]:
        n = (events["event_velocity"][:, 3] > F(c["impact_speed"])).astype(U)
    else:
        parent = PARTICLE.read_images(parent_pos_age, parent_vel_life)
        age, rate, dt = parent["age"].astype(F), F(c["spawn_rate"]), F(c["dt"])
        marks = np.floor(age * rate) - np.floor(np.maximum(age - dt, F(0)) * rate)
        n = np.where((parent["life"] > 0) & (age >= 0), np.minimum(marks, F(MAX_RATE_EVENTS)), F(0)).astype(U)
    index = np.arange(len(n), dtype=U)
    u = random_unit(index, c["step_index"], c["seed"] * STREAM["PER_SEED"] + STREAM["SPAWN_COUNT"])
    fewer = (F(c["spawn_count"]) * F(c["spawn_count_random"]) * u).astype(F)
    return (n * (U(int(c["spawn_count"])) - fewer.astype(U))).astype(U)


def spawn_state(slot, at, parent_velocity, c) -> tuple[np.ndarray, np.ndarray]:
    """spawn() of spawn_events.glsl for child slots ``slot``: (position, velocity) of their births."""
    i, step, streams = slot.astype(U), c["step_index"], c["seed"] * STREAM["PER_SEED"]

    def draw(stream):
        return random_unit(i, step, streams + STREAM[stream])

    normal = random_direction(draw("NORMAL_U"), draw("NORMAL_V"))
    local = np.zeros_like(normal)
    extent = np.asarray(c["emitter_extent"], F)
    if c["emitter_shape"] == EMITTER_SHAPES["SPHERE"]:
        local = normal * (extent[None, :] * np.power(draw("SHAPE_U"), F(1.0) / F(3.0))[:, None])
    elif c["emitter_shape"] == EMITTER_SHAPES["BOX"]:
        local, normal = box_point(draw, extent, normal)
    position = (at + np.asarray(c["spawn_offset"], F)) + local
    inherited = (parent_velocity * F(c["spawn_velocity"])).astype(F)
    speed = np.linalg.norm(inherited, axis=1).astype(F)
    cos_max = F(c["spawn_cone_cos"])
    turn = (speed > 0) & (cos_max < 1)
    if turn.any():
        axis = inherited[turn] / speed[turn, None]
        inherited[turn] = speed[turn, None] * random_in_cone(axis, cos_max, draw("CONE_U")[turn], draw("CONE_V")[turn])
    jitter = random_direction(draw("JITTER_U"), draw("JITTER_V"))
    velocity = (inherited + np.asarray(c["initial_velocity"], F) + normal * F(c["normal_speed"])
                + jitter * (F(c["velocity_random"]) * draw("JITTER_SPEED"))[:, None])
    return position.astype(F), velocity.astype(F)


def birth_slots(births, cursor: int, count: int) -> tuple[np.ndarray, np.ndarray, int]:
    """(parent slot, child slot) of each birth that has a place this substep, and how many have none: the
    exclusive scan puts parent slot i's births after those of slots 0..i-1, from the ring's ``cursor`` on."""
    parent = np.repeat(np.arange(len(births)), births.astype(np.int64))
    rank = np.arange(len(parent))
    placed = rank < count
    return parent[placed], (cursor + rank[placed]) % count, int((~placed).sum())


def spawn_tint(births, events: dict, parent_pos_age, parent_vel_life, parent_look, tint, cursor: int, count: int,
               fraction: float, parent_settings) -> np.ndarray:
    """spawn_tint.glsl: ``tint`` with each placed birth's slot set to (the parent's color at the event, fraction):
    its look table at age / life, at 1 for a parent that died (by speed: color_t of its velocity)."""
    parent, slot, _ = birth_slots(births, cursor, count)
    alive = events["event_position"][parent, 3] < 0
    t = np.ones(len(parent), F)
    state = PARTICLE.read_images(parent_pos_age, parent_vel_life)
    t[alive] = state["age"][parent[alive]].astype(F) / state["life"][parent[alive]].astype(F)
    tint = tint.copy()
    t = color_t(state["velocity"][parent].astype(F), t, parent_settings)
    tint[slot, :3] = look_at(parent_look, t)[:, :3]
    tint[slot, 3] = F(fraction)
    return tint


def spawn_births(births, events: dict, child_pos_age, child_vel_life, cursor: int, c, compact: bool = False):
    """spawn_events.glsl then spawn_cursor.glsl: the child's state with the births written, its next cursor and
    the births lost (overflow)."""
    count = int(c["count"])
    parent, slot, past = birth_slots(births, cursor, count)
    lost = past + int((PARTICLE.read_images(child_pos_age, child_vel_life)["life"][slot] >= 0).sum())
    at = events["event_position"][parent]
    over = np.minimum(at[:, 3], F(c["dt"])) if c["spawn_on"] == SPAWN_EVENTS["DEATH"] else np.zeros(len(slot), F)
    position, velocity = spawn_state(slot, at[:, :3], events["event_velocity"][parent, :3], c)
    limit = F(65504.0) if compact else F(3.0e38)
    pos_age, vel_life = child_pos_age.copy(), child_vel_life.copy()
    born = PARTICLE.pack_images({"position": np.clip(position - np.asarray(c["child_origin"], F), -limit, limit),
                                 "age": over - F(c["dt"]), "velocity": np.clip(velocity, -limit, limit),
                                 "life": np.zeros(len(slot), F)})
    pos_age[slot], vel_life[slot] = (store(texels, compact) for texels in born)
    return pos_age, vel_life, (cursor + min(int(births.sum()), count)) % count, lost


@dataclass
class Member:
    """One effect of a family in the reference: its settings, its parent's index, its state and clock."""

    settings: object
    parent: int | None = None
    inputs: Inputs = None
    pos_age: np.ndarray = None
    vel_life: np.ndarray = None
    clock: Clock = field(default_factory=Clock)
    cursor: int = 0
    lost: int = 0
    events: dict | None = None
    tint: np.ndarray | None = None  # (count, 4) where the effect inherits its parent's color


def family(settings: list, parents: list[int | None], colliders=()) -> list[Member]:
    """Members after ``ParticleSystem.reset`` (parents before their children in the list)."""
    members = []
    for s, parent in zip(settings, parents):
        pos_age, vel_life = init_particles(s)
        if s.spawn_from:
            vel_life[:] = -1
        tint = np.zeros((s.count, 4), F) if inherits_color(s) else None
        members.append(Member(s, parent, inputs_for(s, colliders=colliders), pos_age, vel_life, tint=tint))
    return members


def step_family(members: list[Member], dt: float, emitter, colliders=()) -> None:
    """Reference of ``events.step_family`` for one frame of every member, the emitters standing still at
    ``emitter``; substeps: the first member's (the root's)."""
    substeps = members[0].settings.substeps
    h = dt / substeps
    matrix = np.asarray(emitter, np.float64)
    has_children = {m.parent for m in members}
    for k in range(substeps):
        for number, m in enumerate(members):
            if m.parent is not None:
                parent = members[m.parent]
                c = SPAWN_EVENTS_KERNELS["FULL"].named(spawn_constants(
                    m.settings, parent_count=parent.settings.count, step_index=m.clock.step_index, dt=h,
                    child_origin=m.clock.origin))
                births = spawn_counts(parent.events, parent.pos_age, parent.vel_life, c)
                if m.tint is not None:
                    m.tint = spawn_tint(births, parent.events, parent.pos_age, parent.vel_life,
                                        look_table(parent.settings), m.tint, m.cursor, m.settings.count,
                                        m.settings.spawn_inherit_color, parent.settings)
                m.pos_age, m.vel_life, m.cursor, lost = spawn_births(births, parent.events, m.pos_age, m.vel_life,
                                                                     m.cursor, c, m.inputs.compact)
                m.lost += lost
            origin = state_origin(m.settings, matrix)
            m.clock.time += h
            c = simulate_constants(m.settings, dt=h, step_index=m.clock.step_index, time=m.clock.time,
                                   emitter_prev=matrix, emitter_cur=matrix, origin_in=m.clock.origin,
                                   origin_out=origin, colliders=list(colliders), substep=(k, substeps))
            m.events = {} if number in has_children else None
            m.pos_age, m.vel_life = simulate(m.pos_age, m.vel_life, c, m.inputs, events=m.events,
                                             spawned=bool(m.settings.spawn_from))
            m.clock.origin = origin
            m.clock.step_index += 1
