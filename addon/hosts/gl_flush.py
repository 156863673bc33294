"""``glFlush`` for Blender's OpenGL backend, which its Python API does not offer.

Without a flush the driver keeps the dispatches Python records queued until something waits on
them (the frame's end), so the GPU idles while the CPU records the rest of the draw and only
then starts.  Flushing as the work queues up lets the two overlap: the 4M additive viewport draw on
the H100 went from 2.16 to 1.54-1.57 ms with a flush every 2 to 8 dispatches, while a flush after
every dispatch cost more CPU than it saved on the 59-dispatch alpha draw (``bench/viewport_flush.py``,
2026-11-23).  The call goes through the system's GL library to
the context Blender made current on this thread; other backends (Vulkan, Metal) submit on their
own terms and get no flush.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable

FLUSH_GROUPS = 4096  # workgroups queued between flushes: a 4M-particle dispatch (16K) is flushed at once, a scan's small levels together

_LIBRARIES = {
    "linux": ("libOpenGL.so.0", "libGL.so.1"),  # glvnd's, then a vendor's own libGL
    "win32": ("opengl32",),
    "darwin": ("/System/Library/Frameworks/OpenGL.framework/OpenGL",),
}


def gl_flush(backend: str, platform: str = sys.platform) -> Callable[[], None] | None:
    """The GL library's ``glFlush`` when Blender draws with OpenGL (``gpu.platform.backend_type_get()``),
    else None (another backend, or no GL library found: the draw is right either way, just less overlapped)."""
    if backend != "OPENGL":
        return None
    for name in _LIBRARIES.get("linux" if platform.startswith("linux") else platform, ()):
        try:
            function = ctypes.CDLL(name).glFlush
        except (OSError, AttributeError):
            continue
        function.argtypes, function.restype = [], None
        return function
    return None


class Flusher:
    """Counts the workgroups a host dispatches and flushes once ``groups`` of them wait unflushed: the big
    dispatches (a simulation step, a splat) go to the GPU at once, runs of small ones (a scan's levels)
    together, so a flush's CPU cost (about 16 us) buys GPU time."""

    def __init__(self, flush: Callable[[], None] | None, groups: int = FLUSH_GROUPS):
        self.flush, self.groups, self.pending = flush, groups, 0

    def dispatched(self, groups: tuple[int, int, int]) -> None:
        if self.flush is None:
            return
        self.pending += groups[0] * groups[1] * groups[2]
        if self.pending >= self.groups:
            self.pending = 0
            self.flush()
