"""``glFlush`` for Blender's OpenGL backend, which its Python API does not offer.

Without a flush the driver keeps the dispatches Python records queued until something waits on
them (the frame's end), so the GPU idles while the CPU records the rest of the draw and only
then starts.  Flushing every few dispatches lets the two overlap: the 4M additive viewport draw
on the H100 went from 2.16 to 1.54-1.57 ms with a flush every 2 to 8 dispatches, while a flush
after every dispatch cost more CPU than it saved on the 59-dispatch alpha draw
(``bench/viewport_flush.py``, 2026-11-23).  The call goes through the system's GL library to
the context Blender made current on this thread; other backends (Vulkan, Metal) submit on their
own terms and get no flush.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable

FLUSH_EVERY = 4  # dispatches between flushes (2 to 8 measured the same; 1 costs CPU)

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
    """Counts the dispatches a host records and flushes every ``every`` of them."""

    def __init__(self, flush: Callable[[], None] | None, every: int = FLUSH_EVERY):
        self.flush, self.every, self.pending = flush, every, 0

    def dispatched(self) -> None:
        if self.flush is None:
            return
        self.pending += 1
        if self.pending >= self.every:
            self.pending = 0
            self.flush()
