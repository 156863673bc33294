"""Sub-emitters: effects whose particles are born from another effect's events (GPU events).

An effect with ``spawn_from`` set is a child: its slots are born only where its parent's particles die, hit a
collider or pass a rate mark (``spawn_on``), never from its own object, and never respawn.  A family steps
substep by substep, parent, then child, then grandchild (:func:`step_family`); for each child, each substep::

    simulate (EVENTS) of the parent          # event_position, event_velocity per parent slot (simulate.glsl)
    spawn_count(events -> births)            # per parent slot: its events x the count per event
    scan(births -> offsets, total)           # exclusive, on the GPU (scan.py, as compaction.py does)
    spawn_events(events, offsets -> child)   # parent slot i writes its births at cursor + offset_i, ...
    spawn_tint(events, offsets -> tint)      # with spawn_inherit_color: the parent's color at the event per birth
    spawn_cursor(cursor, total -> cursor)    # the child's ring cursor moves past the births
    simulate (SPAWNED) of the child          # the births draw their lifetime and move from the event's instant

Why a scan rather than an atomic append: atomics hand out places in a different order every run, and two bakes
must be byte-identical; the scan puts slot i's births after those of slots 0..i-1, every run, and its total stays
on the GPU (no readback, no indirect dispatch: spawn_events runs over the parent's slots and the threads of slots
without births return).  The child's slots are a ring: the cursor (a 1x1 image, kept in every checkpoint) moves
past each substep's births; a birth onto a child still alive, or past the child's slot count in one substep,
counts as overflow (:meth:`Spawner.read_overflow`).  An effect without children or parent runs the simulate
kernel it always ran: the event code is compiled in only for families (the simulate kernel's features
simulation.EVENTS and SPAWNED).

Its kernels vary only by the state layout they read and write (tables keyed by layout, a shape).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ..look.look import LOOK_SIZE, PARTICLE_STATE, color_per_speed, look_table
from ..primitives.scan import Scan
from ..seam.kernels import Constant, Image, Kernel, Sampler
from ..seam.state import LAYOUTS
from ..seam.tables import EMITTER_SHAPES, SPAWN_EVENTS
from ..settings.settings import EffectSettings
from .simulation import ParticleSystem, event_images

MAX_RATE_EVENTS = 16  # rate events one parent particle gives in one substep, at most
MAX_CHAIN = 3  # levels of a family: parent, child, grandchild

_DEFINES = (*SPAWN_EVENTS.defines(), ("MAX_RATE_EVENTS", str(MAX_RATE_EVENTS)))
_CONSTANTS = (
    Constant("INT", "count"),  # the child's slots
    Constant("INT", "parent_count"),
    Constant("INT", "step_index"),  # the child's
    Constant("INT", "seed"),  # the child's
    Constant("FLOAT", "dt"),  # the substep's
    Constant("VEC4", "spawn_rule", components=(
        ("spawn_on", "x"),  # tables.SPAWN_EVENTS
        ("spawn_count", "y"),  # births per event
        ("spawn_count_random", "z"),
        ("spawn_rate", "w"),  # rate events per second of a parent particle's life
    )),
    Constant("VEC4", "spawn_motion", components=(
        ("impact_speed", "x"),  # slowest impact that spawns
        ("spawn_velocity", "y"),  # fraction of the parent's velocity inherited
        ("spawn_cone_cos", "z"),
        ("emitter_shape", "w"),  # POINT, SPHERE or BOX around the event
    )),
    Constant("VEC4", "spawn_place", components=(("spawn_offset", "xyz"),)),
    Constant("VEC4", "spawn_extent", components=(("emitter_extent", "xyz"), ("velocity_random", "w"))),
    Constant("VEC4", "spawn_base", components=(("initial_velocity", "xyz"), ("normal_speed", "w"))),
    Constant("VEC4", "child_origin_in", components=(("child_origin", "xyz"),)),  # the child's state origin
)
_COUNTING = ("parent_count", "step_index", "seed", "dt", "spawn_rule", "spawn_motion")  # what spawn_count reads
_INCLUDES = ("common.glsl", "random.glsl")

# By the parent's state layout (a rate reads its ages).
SPAWN_COUNT_KERNELS = {
    name: Kernel("spawn_count", images=(*event_images("READ"), *layout.images("READ"),
                                        Image("spawn_births", "R32UI", "WRITE")),
                 constants=tuple(c for c in _CONSTANTS if c.name in _COUNTING), includes=_INCLUDES,
                 defines=_DEFINES)
    for name, layout in LAYOUTS.items()
}
# By the child's state layout (it writes the births).
SPAWN_EVENTS_KERNELS = {
    name: Kernel("spawn_events", images=(
        *event_images("READ"), Image("spawn_births", "R32UI", "READ"), Image("spawn_offsets", "R32UI", "READ"),
        Image("spawn_cursor", "R32UI", "READ"), Image("child_pos_age", layout.format, "WRITE"),
        Image("child_vel_life", layout.format), Image("spawn_overflow", "R32UI", atomic=True),
    ), constants=_CONSTANTS, includes=(*_INCLUDES, "cone.glsl", "spawn_births.glsl"),
        defines=(*_DEFINES, ("STATE_LIMIT", layout.limit)))
    for name, layout in LAYOUTS.items()
}
SPAWN_CURSOR = Kernel(
    "spawn_cursor",
    images=(Image("spawn_cursor", "R32UI", "READ"), Image("spawn_total", "R32UI", "READ"),
            Image("next_cursor", "R32UI", "WRITE")),
    constants=(Constant("INT", "count"), Constant("INT", "advance")),
    local_size=(1, 1, 1),
    includes=(),
)
# The parent's color at each birth's event, for a child that inherits it (look.inherits_color).
SPAWN_TINT = Kernel(
    "spawn_tint",
    images=(Image("event_position", "RGBA32F", "READ"), Image("spawn_births", "R32UI", "READ"),
            Image("spawn_offsets", "R32UI", "READ"), Image("spawn_cursor", "R32UI", "READ"),
            Image("child_tint", "RGBA32F", "WRITE")),
    samplers=(*PARTICLE_STATE, Sampler("parent_look")),  # the parent's state and look table
    constants=(Constant("INT", "count"), Constant("INT", "parent_count"), Constant("FLOAT", "spawn_inherit_color"),
               Constant("FLOAT", "parent_color_per_speed")),  # look.color_per_speed of the parent
    includes=("common.glsl", "spawn_births.glsl"),
)
EVENT_KERNELS = (*SPAWN_COUNT_KERNELS.values(), *SPAWN_EVENTS_KERNELS.values(), SPAWN_CURSOR, SPAWN_TINT)


@lru_cache(maxsize=64)
def _spawn_packer(settings: EffectSettings):
    """The spawn constants a child's settings decide, packed once."""
    s = settings
    return SPAWN_EVENTS_KERNELS["FULL"].packer({
        "count": s.count,
        "seed": s.seed,
        "spawn_on": SPAWN_EVENTS[s.spawn_on],
        "spawn_count": s.spawn_count,
        "spawn_count_random": s.spawn_count_random,
        "spawn_rate": s.spawn_rate,
        "impact_speed": s.spawn_impact_speed,
        "spawn_velocity": s.spawn_velocity,
        "spawn_cone_cos": math.cos(s.spawn_cone),
        "emitter_shape": EMITTER_SHAPES[s.emitter_shape],  # POINT, SPHERE or BOX (simulation.check_spawned)
        "spawn_offset": s.spawn_offset,
        "emitter_extent": tuple(s.emitter_radius * axis for axis in s.emitter_scale),
        "velocity_random": s.velocity_random,
        "initial_velocity": s.velocity,
        "normal_speed": s.normal_velocity,
    })


def spawn_constants(settings: EffectSettings, *, parent_count: int, step_index: int, dt: float, child_origin) -> dict:
    """The spawn kernels' constants for one substep of a child (the numpy reference takes the same dict)."""
    return _spawn_packer(settings)({"parent_count": parent_count, "step_index": step_index, "dt": dt,
                                    "child_origin": child_origin})


class Spawner:
    """One child's births from its parent's events: the scan's images, the ring cursor, the overflow count."""

    def __init__(self, host, parent: ParticleSystem, child: ParticleSystem):
        self.host, self.parent, self.child = host, parent, child
        width, rows = parent.pos_age.width, parent.pos_age.height
        self.births = host.texture("spawn_births", width, rows, "R32UI")
        self.offsets = host.texture("spawn_offsets", width, rows, "R32UI")
        self.total = host.texture("spawn_total", 1, 1, "R32UI")
        self.cursor, self._next = (host.texture("spawn_cursor", 1, 1, "R32UI") for _ in range(2))
        self.overflow = host.texture("spawn_overflow", 1, 1, "R32UI")
        self.scan = Scan(host, parent.count)
        self._look, self._look_key = None, None  # the parent's look table (spawn_tint), and what it follows from
        parent.record_events()
        self.reset()

    def reset(self) -> None:
        self.host.clear(self.cursor)
        self.host.clear(self.overflow)

    def run(self, dt: float) -> None:
        """The births of this substep (``dt`` seconds) into the child's state, before the child steps."""
        parent, child = self.parent, self.child
        constants = spawn_constants(child.settings, parent_count=parent.count, step_index=child.step_index, dt=dt,
                                    child_origin=child.origin)
        self.host.dispatch(SPAWN_COUNT_KERNELS[parent.layout.name], parent.groups,
                           {**parent.events, **parent.textures, "spawn_births": self.births},
                           {name: constants[name] for name in _COUNTING})
        self.scan.run(self.births, self.offsets, parent.count, total=self.total)
        self.host.dispatch(SPAWN_EVENTS_KERNELS[child.layout.name], parent.groups, {
            **parent.events, "spawn_births": self.births, "spawn_offsets": self.offsets, "spawn_cursor": self.cursor,
            "child_pos_age": child.pos_age, "child_vel_life": child.vel_life, "spawn_overflow": self.overflow,
        }, constants)
        if child.tint is not None:
            self._inherit_color()
        self._move_cursor(self.cursor, self._next, advance=True)
        self.cursor, self._next = self._next, self.cursor

    def _inherit_color(self) -> None:
        """Each birth of this substep takes the parent's color at its event into the child's tint."""
        parent, child = self.parent, self.child
        self.host.dispatch(SPAWN_TINT, parent.groups, {
            "event_position": parent.events["event_position"], "spawn_births": self.births,
            "spawn_offsets": self.offsets, "spawn_cursor": self.cursor, "child_tint": child.tint,
            "pos_age": parent.pos_age, "vel_life": parent.vel_life, "parent_look": self._parent_look(),
        }, {"count": child.count, "parent_count": parent.count,
            "spawn_inherit_color": child.settings.spawn_inherit_color,
            "parent_color_per_speed": color_per_speed(parent.settings)})

    def _parent_look(self):
        """The parent's look table (look.py) with the ramp its simulation was made with (``tint_ramp``: a draw's
        ramp edit does not reach the births), made again when its settings change."""
        ramp = self.parent.tint_ramp
        key = (self.parent.settings, None if ramp is None else np.asarray(ramp, np.float32).tobytes())
        if key != self._look_key:
            self._look = self.host.texture("parent_look", LOOK_SIZE, 1, "RGBA32F",
                                           look_table(self.parent.settings, ramp))
            self._look_key = key
        return self._look

    def _move_cursor(self, cursor, into, advance: bool) -> None:
        self.host.dispatch(SPAWN_CURSOR, (1, 1, 1), {"spawn_cursor": cursor, "spawn_total": self.total,
                                                     "next_cursor": into},
                           {"count": self.child.count, "advance": int(advance)})

    def read_cursor(self) -> int:
        """The next child slot a birth takes (a readback: host checkpoints and the disk cache)."""
        return int(self.host.read(self.cursor)[0, 0])

    def copy_cursor(self, into=None):
        """The cursor copied on the GPU (a checkpoint that waits for nothing), into ``into`` when given."""
        into = into if into is not None else self.host.texture("spawn_cursor", 1, 1, "R32UI")
        self._move_cursor(self.cursor, into, advance=False)
        return into

    def restore_cursor(self, cursor) -> None:
        """Back to a checkpoint's cursor: an int (host, disk) or a copy on the GPU (``copy_cursor``)."""
        if cursor is None or isinstance(cursor, int):
            self.host.clear(self.cursor, cursor or 0)
        else:
            self._move_cursor(cursor, self.cursor, advance=False)

    def read_overflow(self) -> int:
        """Births lost since the reset: onto a child still alive, or past the child's slots in one substep."""
        return int(self.host.read(self.overflow)[0, 0])


def family_parents(spawn_from: list[str], names: list[tuple[str, str]]) -> tuple[list[int | None], list[str]]:
    """Each effect's parent index (None: emitted from its own object, or refused) from its ``spawn_from`` and
    every effect's (object, effect) name; warnings for what is refused: a parent not in the scene or named
    ambiguously, a cycle (A spawns B spawns A), a chain deeper than MAX_CHAIN.  A refused effect spawns nothing."""
    def label(i: int) -> str:
        return f"effect '{names[i][1]}' on '{names[i][0]}'"

    parents: list[int | None] = [None] * len(names)
    warnings = []
    for i, wanted in enumerate(spawn_from):
        if not wanted:
            continue
        found = [j for j, (obj, effect) in enumerate(names) if wanted in (effect, f"{obj}/{effect}")]
        if len(found) == 1:
            parents[i] = found[0]
        elif found:
            warnings.append(f"{label(i)}: several effects are named '{wanted}': name the parent as 'Object/Effect'; "
                            "it spawns nothing")
        else:
            warnings.append(f"{label(i)}: spawns from '{wanted}', which is not an enabled effect of the scene; "
                            "it spawns nothing")
    refused = set()
    for i in range(len(names)):
        chain, j = [i], parents[i]
        while j is not None and j not in chain:
            chain.append(j)
            j = parents[j]
        if j is not None:
            warnings.append(f"{label(i)}: its parents spawn from it in a cycle "
                            f"({' <- '.join(names[k][1] for k in [*chain, j])}); it spawns nothing")
            refused.add(i)
        elif len(chain) > MAX_CHAIN:
            warnings.append(f"{label(i)}: spawned {len(chain) - 1} levels below '{names[chain[-1]][1]}': at most "
                            f"{MAX_CHAIN - 1} levels; it spawns nothing")
            refused.add(i)
    return [None if i in refused else p for i, p in enumerate(parents)], warnings


def link_families(host, systems: list[ParticleSystem], names: list[tuple[str, str]]) -> list[str]:
    """Link every spawned effect to its parent (a :class:`Spawner`); the warnings of :func:`family_parents`."""
    parents, warnings = family_parents([system.settings.spawn_from for system in systems], names)
    for child, parent in zip(systems, parents):
        if parent is not None:
            child.spawner = Spawner(host, systems[parent], child)
            systems[parent].children.append(child)
    return warnings


def step_family(root: ParticleSystem, dt: float, motion: dict) -> None:
    """One frame of ``root`` and the effects spawned from it, substep by substep (the root's substeps): each
    system steps, then each child's births and the child's step.  ``motion``: id(system) -> (emitter matrix at
    the frame before, now)."""
    substeps = root.settings.substeps
    for k in range(substeps):
        _substep_tree(root, dt, k, substeps, motion)


def _substep_tree(system: ParticleSystem, dt: float, k: int, substeps: int, motion: dict) -> None:
    system.substep(dt, k, substeps, *motion[id(system)])
    for child in system.children:
        child.spawner.run(dt / substeps)
        _substep_tree(child, dt, k, substeps, motion)
