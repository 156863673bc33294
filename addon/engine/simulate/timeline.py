"""Simulation along a timeline: checkpoints make scrubbing back cheap.

The simulation only runs forward, one frame at a time.  Every
``interval`` frames the state of every system is copied (a checkpoint): into
GPU memory for the scene's simulations (the viewport and the bake, where a
readback would stall drawing), or to host memory.  Seeking to an earlier frame, or far ahead, restores the
nearest checkpoint at or before the target and re-simulates from there;
because emission randomness is keyed by (particle, step) and the scene is
re-read each frame, the replay is bit-identical to the first pass.  The
checkpoints live within a memory budget: when it is exceeded the checkpoint
farthest from the current frame goes first (the start frame's last).

A ``store`` (``addon/scene/cache.py``) adds checkpoints on disk: seeking
restores the latest valid one at or before the target when no memory
checkpoint or the current state is closer, and every stepped frame is offered
to it (it writes the frames it keeps while a bake fills the cache).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Checkpoint:
    frame: int
    states: list  # one ParticleSystem.snapshot() per system
    nbytes: int


class Timeline:
    """Where the systems are in time, and the checkpoints to go back to."""

    def __init__(self, systems: list, start: Callable[[], int], advance: Callable[[int], None],
                 budget_bytes: int, interval: int = 10, on_gpu: bool = False, store=None):
        """``start()`` resets the systems and returns the start frame; ``advance(f)`` steps them to frame f.

        ``on_gpu``: checkpoints are copies in GPU memory (no readback: the viewport), not host arrays.
        ``store``: ``best(frame)`` (a stored frame at or before it, or None), ``load(frame)`` (its
        states) and ``offer(frame, systems)`` (after each frame simulated)."""
        self.systems = systems
        self.store = store
        self._start = start
        self._advance = advance
        self.budget_bytes = budget_bytes
        self.interval = max(1, interval)
        self.on_gpu = on_gpu
        self.checkpoints: dict[int, Checkpoint] = {}
        self.frame: int | None = None
        self.start_frame: int | None = None
        self.steps_run = 0  # frames simulated so far (how much work seeking cost)
        self.loaded = []  # frames restored from the store

    @property
    def nbytes(self) -> int:
        return sum(c.nbytes for c in self.checkpoints.values())

    def clear(self) -> None:
        """Forget every checkpoint (settings changed): the next seek re-simulates from the start."""
        self.checkpoints.clear()
        self.frame = None

    def _best(self, frame: int) -> int | None:
        return max((f for f in self.checkpoints if f <= frame), default=None)

    def _stored(self, frame: int, best: int | None) -> int | None:
        """A disk checkpoint closer to ``frame`` than memory and the current state, or None."""
        if self.store is None or (self.frame is not None and self.frame <= frame
                                  and frame - self.frame <= self.interval):
            return None  # stepping on is as cheap as loading
        stored = self.store.best(frame)
        if stored is None or (best is not None and stored <= best):
            return None
        return stored if self.frame is None or self.frame > frame or stored > self.frame else None

    def has_state_for(self, frame: int) -> bool:
        """Whether seeking to ``frame`` goes on from a state (current, checkpoint, stored) without a restart."""
        return ((self.frame is not None and self.frame <= frame) or self._best(frame) is not None
                or (self.store is not None and self.store.best(frame) is not None))

    def begin(self, start_frame: int) -> None:
        """The systems were just reset and prerolled at ``start_frame`` (``start()`` run in steps)."""
        self.start_frame = self.frame = start_frame
        self._save()
        self._offer()

    def seek(self, frame: int) -> None:
        """Bring every system to ``frame`` (at or after the start frame)."""
        if self.frame == frame:
            return
        best = self._best(frame)
        stored = self._stored(frame, best)
        if stored is not None:
            self._load(stored)
        elif self.frame is None or self.frame > frame or (best is not None and best > self.frame):
            if best is None:
                self.begin(self._start())
            else:
                self._restore(best)
        while self.frame < frame:
            self.frame += 1
            self._advance(self.frame)
            self.steps_run += 1
            if (self.frame - self.start_frame) % self.interval == 0 and self.frame not in self.checkpoints:
                self._save()
            self._offer()

    def _offer(self) -> None:
        if self.store is not None:
            self.store.offer(self.frame, self.systems)

    def _restore(self, frame: int) -> None:
        for system, state in zip(self.systems, self.checkpoints[frame].states):
            system.restore(state)
        self.frame = frame

    def _load(self, frame: int) -> None:
        for system, state in zip(self.systems, self.store.load(frame)):
            system.restore(state)
        self.start_frame = self.store.start_frame
        self.frame = frame
        self.loaded.append(frame)
        self._save()

    def _save(self) -> None:
        nbytes = sum(system.snapshot_nbytes for system in self.systems)
        if nbytes > self.budget_bytes:
            return  # it would not be kept: no copy (on the host, a GPU wait) for it
        evicted = []
        while self.checkpoints and self.nbytes + nbytes > self.budget_bytes:
            victim = max(self.checkpoints, key=lambda f: (f != self.start_frame, abs(f - self.frame)))
            evicted.append(self.checkpoints.pop(victim))
        if self.on_gpu:  # into an evicted checkpoint's textures: playing on allocates nothing once the budget is full
            spare = evicted[0].states if evicted else [None] * len(self.systems)
            states = [system.snapshot_on_gpu(into) for system, into in zip(self.systems, spare)]
        else:
            states = [system.snapshot() for system in self.systems]
        self.checkpoints[self.frame] = Checkpoint(self.frame, states, nbytes)
