"""OpenGL entry points of the context Blender made current, for what its Python API lacks.

Blender's ``gpu`` module has no flush, no asynchronous readback and no timer queries.  When it
draws with OpenGL, its context is current on the calling thread, so the system's GL library
reaches that context through ctypes: ``gl_flush.py`` and ``gl_readback.py`` call it, and
``bench/viewport_timeline.py`` times dispatches with it.  Other backends (Vulkan, Metal) get
None and the product takes Blender's own path.
"""

from __future__ import annotations

import ctypes
import sys

SOFTWARE_RENDERERS = ("llvmpipe", "softpipe", "swrast")  # the "GPU" is the CPU's own cores

_LIBRARIES = {
    "linux": ("libOpenGL.so.0", "libGL.so.1"),  # glvnd's, then a vendor's own libGL
    "win32": ("opengl32",),
    "darwin": ("/System/Library/Frameworks/OpenGL.framework/OpenGL",),
}


def software(renderer: str) -> bool:
    return any(name in renderer.lower() for name in SOFTWARE_RENDERERS)


def gl_library(backend: str, platform: str = sys.platform) -> ctypes.CDLL | None:
    """The system's GL library when Blender draws with OpenGL (``gpu.platform.backend_type_get()``)."""
    if backend != "OPENGL":
        return None
    for name in _LIBRARIES.get("linux" if platform.startswith("linux") else platform, ()):
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


def gl_function(library: ctypes.CDLL, name: str, argtypes: list, restype=None):
    """``name`` from the library (Linux and macOS export every core function; Windows' opengl32 only
    OpenGL 1.1, the rest through wglGetProcAddress), typed; None when it has none."""
    try:
        function = getattr(library, name)
    except AttributeError:
        lookup = getattr(library, "wglGetProcAddress", None)
        if lookup is None:
            return None
        lookup.restype, lookup.argtypes = ctypes.c_void_p, [ctypes.c_char_p]
        address = lookup(name.encode())
        if not address:
            return None
        return ctypes.CFUNCTYPE(restype, *argtypes)(address)
    function.argtypes, function.restype = argtypes, restype
    return function
