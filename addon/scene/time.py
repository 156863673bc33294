"""Stepping time: every effect's particle systems carried along the scene's frames from the simulation start.

:class:`SceneSimulation` owns the systems, their sorts and the
:class:`~.engine.timeline.Timeline` (checkpoints in memory and, with a
:class:`~.cache.SimCache`, on disk).  It reads the scene only through the
``read_frame(frame, previous)`` function it is given (one
:class:`~.snapshot.FrameInputs` per frame), and keeps each effect's
history key: a hash chain of its settings and every frame's inputs so far, the
key a disk checkpoint must match to stand in for simulating up to its frame.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ..engine.order.sorting import EffectSort
from ..engine.pipeline import advance
from ..engine.simulate.events import link_families, step_family
from ..engine.simulate.neighbours import MAX_NEIGHBOURS
from ..engine.simulate.simulation import ParticleSystem
from ..engine.simulate.timeline import Timeline
from .edits import Edit, edit_between
from .sdf_colliders import SdfColliders
from .snapshot import FrameInputs, SceneSnapshot, digest

CHECKPOINT_INTERVAL = 10  # frames between timeline checkpoints (memory and disk)
PREROLL_CHUNK = 120  # steps of a long preroll between progress reports (a bake checks ESC, the viewport redraws)
PREROLL_AT_ONCE = 480  # a preroll of at most this many steps (20 s at 24 fps) runs in one piece


class SceneSimulation:
    """The scene's effects simulated along its timeline from one :class:`SceneSnapshot`."""

    def __init__(self, host, snapshot: SceneSnapshot, read_frame: Callable[[int, FrameInputs | None], FrameInputs],
                 interval: int = CHECKPOINT_INTERVAL):
        self.snapshot = snapshot
        self.host = host
        self._read_frame = read_frame
        self.systems = [ParticleSystem(host, e.settings, e.mesh, e.ramp) for e in snapshot.effects]
        # Sub-emitters: each spawned effect linked to its parent; what was refused (a cycle, a parent not there).
        self.family_warnings = link_families(host, self.systems, [(e.object_name, e.effect_name)
                                                                  for e in snapshot.effects])
        self.sorts = [EffectSort(system) for system in self.systems]
        budget = int(snapshot.render.cache_memory * 2**20)
        # Checkpoints as GPU copies: a host copy would wait for the GPU in the middle of a bake.
        self.timeline = Timeline(self.systems, self._start, self._step_to, budget, interval, on_gpu=True)
        self._keys: dict[int, list[bytes]] = {}  # each effect's history key at each frame read
        self.sdf: SdfColliders | None = None  # made when a mesh collider first appears
        self.sdf_measure = False  # time SDF rebuilds with the GPU waited for (the Stats panel shows them)
        # The frame the systems were last stepped to; read now so that warnings are known before any frame.
        self.inputs: FrameInputs = self.read(snapshot.simulation_start)

    def relook(self, snapshot: SceneSnapshot) -> None:
        """Take ``snapshot``'s effects, whose edit from this simulation's costs less than a new simulation
        (edits.edit_between): the simulated history, its checkpoints and the disk cache stand, the systems draw
        with the new settings."""
        if edit_between(self.snapshot, snapshot) is Edit.RESIMULATE:
            raise ValueError("a snapshot whose history differs from the simulated one cannot be taken: "
                             "simulate it afresh")
        self.snapshot = snapshot
        for system, effect in zip(self.systems, snapshot.effects):
            system.settings = effect.settings

    def neighbour_overflows(self) -> list[str]:
        """A warning per interacting effect whose particles had more neighbours than a gather visits since the
        simulation start (a readback of one counter each, as the spawners' lost births)."""
        cut = [(effect, system.interactions.read_overflow()) for effect, system in zip(self.snapshot.effects, self.systems)
               if system.interactions is not None]
        return [f"effect '{effect.effect_name}' on '{effect.object_name}': {count:,} times a particle had more than "
                f"{MAX_NEIGHBOURS} neighbours within its interaction radius (the rest were left out): lower the "
                "Interaction Radius or the density" for effect, count in cut if count]

    def spawn_overflows(self) -> list[str]:
        """A warning per spawned effect that lost births since the simulation start (a readback of one counter
        each, as the Stats panel's Emax overflow)."""
        lost = [(effect, system.spawner.read_overflow()) for effect, system in zip(self.snapshot.effects, self.systems)
                if system.spawner is not None]
        return [f"effect '{effect.effect_name}' on '{effect.object_name}': {count:,} spawned particles lost (more "
                "were alive or born at once than its count): raise its count" for effect, count in lost if count]

    @property
    def start_frame(self) -> int:
        """The simulation's own start (``properties.simulation_range``), whatever frames are rendered."""
        return self.snapshot.simulation_start

    def read(self, frame: int, previous: FrameInputs | None = None) -> FrameInputs:
        inputs = self._read_frame(frame, previous)
        self._chain(inputs)
        return inputs

    def _chain(self, inputs: FrameInputs) -> None:
        frame = inputs.frame
        if frame == self.start_frame:
            before = [self.snapshot.effect_key(i) for i in range(len(self.systems))]
        else:
            before = self._keys.get(frame - 1)
            if before is None:
                return
        keys: dict[int, bytes] = {}
        for i in self._family_order():  # a spawned effect's history holds its parent's
            parent = self.systems[i].spawner.parent if self.systems[i].spawner else None
            keys[i] = digest(before[i], inputs.key(i), *([keys[self.systems.index(parent)]] if parent else []))
        self._keys[frame] = [keys[i] for i in range(len(before))]

    def _family_order(self) -> list[int]:
        """The systems' indices, every parent before its children."""
        order = [i for i, system in enumerate(self.systems) if system.spawner is None]
        for i in order:  # grows while walked: children after their parent
            order += [self.systems.index(child) for child in self.systems[i].children]
        return order

    def history_keys(self, frame: int) -> list[bytes]:
        """Each effect's key for its history up to ``frame``: reads the frames not yet read (no simulating)."""
        missing = [f for f in range(self.start_frame, frame + 1) if f not in self._keys]
        for f in missing:
            self.read(f)
        return self._keys[frame]

    def preroll(self) -> Iterator[tuple[int, int]]:
        """Reset every system at the start frame and run its preroll there; a long one yields (steps done,
        of total) every ``PREROLL_CHUNK`` steps: a bake shows the progress and can stop in between."""
        self.inputs = inputs = self.read(self.start_frame)
        dt = self.snapshot.seconds_per_frame
        counts = [round(system.settings.preroll / dt) if system.spawner is None else 0 for system in self.systems]
        total, done = sum(counts), 0
        piece = PREROLL_CHUNK if total > PREROLL_AT_ONCE else total + 1
        self._hand_over(inputs)
        still = {id(system): (matrix, matrix) for system, matrix in zip(self.systems, inputs.emitters)}
        for system in self.systems:
            system.reset()
        for system, count in zip(self.systems, counts):
            if system.spawner is not None:
                continue  # steps with its parent, the family as long as the parent's preroll
            for _ in range(count):
                step_family(system, dt, still)
                done += 1
                if done % piece == 0:
                    yield done, total
            step_family(system, dt, still)
        for sort, matrix in zip(self.sorts, inputs.emitters):
            sort.reset()
            sort.after_step(0, matrix[:3, 3])

    def _hand_over(self, inputs: FrameInputs) -> None:
        """The frame's fields and colliders to every system, the SDF colliders' grids built where they changed."""
        found = list(inputs.colliders)
        if inputs.collider_meshes and self.systems and self.sdf is None:
            self.sdf = SdfColliders(self.host, min(system.settings.size for system in self.systems))
        if self.sdf is not None:
            self.sdf.measure = self.sdf_measure
            found = self.sdf.update(found, list(inputs.collider_meshes))
        for k, system in enumerate(self.systems):
            system.set_scene_inputs(inputs.fields, found)
            system.flock_target = inputs.targets[k] if inputs.targets else None
            if self.sdf is not None:
                system.set_sdf_atlas(self.sdf.atlas)

    def _start(self) -> int:
        for _ in self.preroll():
            pass
        return self.start_frame

    def _step_to(self, frame: int) -> None:
        """One frame forward to ``frame``, with the emitters' motion since the frame before."""
        if self.inputs is None or self.inputs.frame != frame - 1:  # resumed from a checkpoint
            self.inputs = self.read(frame - 1)
        current = self.read(frame, self.inputs)
        self._hand_over(current)
        advance(self.systems, self.snapshot.seconds_per_frame, list(self.inputs.emitters), list(current.emitters))
        self.inputs = current
        for sort, matrix in zip(self.sorts, current.emitters):
            sort.after_step(frame - self.start_frame, matrix[:3, 3])

    def prepare(self, frame: int) -> Preroll:
        """What seeking to ``frame`` does first, in pieces: the preroll (with progress) unless a checkpoint
        in memory or on disk already lies at or before ``frame``."""
        def steps():
            if self.timeline.has_state_for(frame):
                return
            yield from self.preroll()
            self.timeline.begin(self.start_frame)

        return Preroll(steps())

    def seek(self, frame: int) -> None:
        self.timeline.seek(max(frame, self.start_frame))


class Preroll:
    """A preroll run a piece at a time by a bake: ``step()`` runs the next piece (False once none is left)."""

    def __init__(self, pieces: Iterator[tuple[int, int]]):
        self._pieces = pieces
        self.progress: tuple[int, int] | None = None  # (steps done, of total) after the last piece
        self.finished = False

    @property
    def fraction(self) -> float:
        return 1.0 if self.finished or self.progress is None else self.progress[0] / max(1, self.progress[1])

    def progress_of(self, frames_done: int) -> float:
        """A bake's progress bar: frames done, or while this preroll runs its fraction of the first frame."""
        return frames_done if self.finished else self.fraction

    def step(self) -> bool:
        if self.finished:
            return False
        try:
            self.progress = next(self._pieces)
            return True
        except StopIteration:
            self.finished = True
            return False
