"""GL timestamps around every dispatch and draw a product host records, inside Blender: where a draw's or a
step's time goes on the GPU (``bench/viewport_timeline.py``, ``bench/interaction_peers.py``).

Blender's Python API has no timer queries; its GL context is current on this thread, so ``glQueryCounter``
reaches it through ctypes (``addon/hosts/gl_native.py``).  A timestamp is written once every earlier command has
finished: the one before a command and the one after bound its time; ``timeline`` turns them into the GPU's span,
the commands' own time, the gaps between them and the part of the gaps waiting for the CPU to call the next.
"""

from __future__ import annotations

import ctypes
import time
from collections import defaultdict

from addon.hosts.gl_flush import Flusher
from addon.hosts.gl_native import gl_function, gl_library
from bench.counting import CountingHost

GL_TIMESTAMP = 0x8E28
GL_QUERY_RESULT = 0x8866


class Timestamps:
    """GL timestamp queries, reused draw after draw."""

    def __init__(self):
        library = gl_library("OPENGL")
        self._gen = gl_function(library, "glGenQueries", [ctypes.c_int, ctypes.POINTER(ctypes.c_uint)])
        self._counter = gl_function(library, "glQueryCounter", [ctypes.c_uint, ctypes.c_uint])
        self._result = gl_function(library, "glGetQueryObjectui64v",
                                   [ctypes.c_uint, ctypes.c_uint, ctypes.POINTER(ctypes.c_uint64)])
        self._now = gl_function(library, "glGetInteger64v", [ctypes.c_uint, ctypes.POINTER(ctypes.c_int64)])
        self.pool: list[int] = []
        self.used = 0

    def mark(self) -> int:
        """A timestamp query issued now: its index."""
        if self.used == len(self.pool):
            ids = (ctypes.c_uint * 64)()
            self._gen(64, ids)
            self.pool.extend(ids)
        query = self.pool[self.used]
        self._counter(query, GL_TIMESTAMP)
        self.used += 1
        return query

    def result_ns(self, query: int) -> int:
        value = ctypes.c_uint64()
        self._result(query, GL_QUERY_RESULT, ctypes.byref(value))
        return value.value

    def gpu_now_ns(self) -> int:
        """The GL's time now (read without waiting): aligns CPU call times with GPU timestamps."""
        value = ctypes.c_int64()
        self._now(GL_TIMESTAMP, ctypes.byref(value))
        return value.value


class TimelineHost(CountingHost):
    """The product host with a timestamp before and after each dispatch and draw.

    The host's flush comes after a dispatch's second timestamp: flushed between the two, that
    timestamp would go to the GPU with the next flush, and the GPU's wait for it would count as
    the dispatch's time."""

    def __init__(self):
        super().__init__()
        self.flusher, self._flusher = self._flusher, Flusher(None)
        self.stamps = Timestamps()
        self.events: list[tuple[str, float, int, int]] = []  # (name, cpu call s, query before, query after)
        self.recording = False

    def start(self) -> tuple[float, int]:
        self.events.clear()
        self.stamps.used = 0
        self.recording = True
        return time.perf_counter(), self.stamps.gpu_now_ns()

    def _timed(self, name: str, run) -> None:
        if not self.recording:
            run()
            return
        called = time.perf_counter()
        before = self.stamps.mark()
        run()
        self.events.append((name, called, before, self.stamps.mark()))

    def dispatch(self, kernel, groups, textures, constants):
        self._timed(kernel.name, lambda: super(TimelineHost, self).dispatch(kernel, groups, textures, constants))
        self.flusher.dispatched(groups)

    def draw(self, raster, *args, **kwargs):
        self._timed(f"draw {raster.name}", lambda: super(TimelineHost, self).draw(raster, *args, **kwargs))


def timeline(host: TimelineHost, cpu_start: float, gpu_start: int) -> dict:
    """The draw's figures from the events of ``host`` (the GPU drained: every query has its result)."""
    host.recording = False
    stamps = [(name, called, host.stamps.result_ns(a), host.stamps.result_ns(b))
              for name, called, a, b in host.events]
    if not stamps:
        return {"gpu_ms": 0.0, "kernels_ms": 0.0, "gaps_ms": 0.0, "starved_ms": 0.0, "commands": 0, "per_kernel": {}}
    per_kernel = defaultdict(float)
    gaps = starved = 0.0
    previous_end = None
    for name, called, begin, end in stamps:
        per_kernel[name] += (end - begin) / 1e6
        if previous_end is not None and begin > previous_end:
            gap = (begin - previous_end) / 1e6
            gaps += gap
            called_gpu = gpu_start + (called - cpu_start) * 1e9  # the CPU's call on the GPU's clock
            starved += min(gap, max(0.0, (called_gpu - previous_end) / 1e6))
        previous_end = max(previous_end or end, end)
    return {"gpu_ms": (previous_end - stamps[0][2]) / 1e6, "kernels_ms": sum(per_kernel.values()),
            "gaps_ms": gaps, "starved_ms": starved, "commands": len(stamps), "per_kernel": dict(per_kernel)}
