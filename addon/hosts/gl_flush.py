"""``glFlush`` (and ``glFinish``) for Blender's OpenGL backend, which its Python API does not offer.

Without a flush the driver keeps the dispatches Python records queued until something waits on
them (the frame's end), so the GPU idles while the CPU records the rest of the draw and only
then starts.  Flushing as the work queues up lets the two overlap; how often (``FLUSH_GROUPS``) was
chosen by measurement: ``bench/results/nvidia-h100-80gb-hbm3-pcie-sse2-2026-11-23-viewport-flush.json``.
Software renderers (llvmpipe) get none: their GPU is the CPU that records.  The call goes
to the context Blender made current on this thread (``gl_native.py``); other backends (Vulkan,
Metal) submit on their own terms and get no flush.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable

from .gl_native import gl_function, gl_library, software

FLUSH_GROUPS = 16384  # workgroups queued between flushes: a 4M-particle step (16K) goes at once (viewport_flush.py)
# A dispatch this long after the last flush goes at once: a draw's first (its GPU idle since the last draw)
# starts while Python records the rest, whatever the workgroups before the next flush by count.
FLUSH_AFTER_IDLE_S = 0.001


def gl_flush(backend: str, renderer: str, platform: str = sys.platform) -> Callable[[], None] | None:
    """The GL library's ``glFlush`` when Blender draws with OpenGL on a hardware GPU
    (``gpu.platform.backend_type_get()``, ``renderer_get()``), else None (another backend, a software
    renderer, whose GPU is the CPU that records, or no GL library found: the draw is right either
    way, just less overlapped)."""
    library = None if software(renderer) else gl_library(backend, platform)
    return gl_function(library, "glFlush", []) if library is not None else None


def gl_finish(backend: str, platform: str = sys.platform) -> Callable[[], None] | None:
    """The GL library's ``glFinish`` when Blender draws with OpenGL (any renderer), else None: it returns once
    every command queued has run, compute included; reading back a texel waits only for what wrote that
    texel (measured on NVIDIA, bench/interaction_peers.py's drain)."""
    library = gl_library(backend, platform)
    return gl_function(library, "glFinish", []) if library is not None else None


class Flusher:
    """Counts the workgroups a host dispatches and flushes once ``groups`` of them wait unflushed: the big
    dispatches (a simulation step, a splat) go to the GPU at once, runs of small ones (a scan's levels)
    together, so a flush's CPU cost (about 16 us) buys GPU time.  A dispatch ``idle_s`` after the last flush
    (by ``clock``) goes at once too: the first of a draw does not wait for the workgroups of the ones after it."""

    def __init__(self, flush: Callable[[], None] | None, groups: int = FLUSH_GROUPS,
                 idle_s: float = FLUSH_AFTER_IDLE_S, clock: Callable[[], float] = time.perf_counter):
        self.flush, self.groups, self.idle_s, self.clock = flush, groups, idle_s, clock
        self.pending, self.flushed_at = 0, -math.inf

    def dispatched(self, groups: tuple[int, int, int]) -> None:
        if self.flush is None:
            return
        self.pending += groups[0] * groups[1] * groups[2]
        now = self.clock()
        if self.pending >= self.groups or now - self.flushed_at >= self.idle_s:
            self.pending, self.flushed_at = 0, now
            self.flush()
