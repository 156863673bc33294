"""Can Blender get an OpenGL context here, headless?  Asked in a child process before Blender is asked.

Blender's ``gpu.init()`` crashes the whole process when EGL has no usable driver, so the command line runs
this file first in a child (``python -I -S egl_probe.py``: standard library and ctypes only, no bpy, no
numpy; about 0.1 s where ``import bpy, gpu; gpu.init()`` took 2 s) alongside its own ``import bpy``, and
reports a clear error instead of crashing.  It makes the EGL calls Blender 5.2's headless GHOST makes for its
OpenGL backend (``GHOST_SystemHeadless::createOffscreenContext``, ``GHOST_ContextEGL::initializeDrawingContext``):
``eglGetDisplay(EGL_DEFAULT_DISPLAY)`` and ``eglInitialize``, falling back to Mesa's surfaceless platform
where that fails; ``eglBindAPI(EGL_OPENGL_API)`` (EGL 1.2 or later); a config with 8-bit red, green and blue
that OpenGL renders to and that has pbuffers; a 1x1 pbuffer; a core-profile context of OpenGL 4.6, 4.5, 4.4
or 4.3, the first the driver gives; made current.  Then ``glGetString`` says which renderer and version.

Prints ``renderer<TAB>GL version<TAB>seconds those calls took<TAB>time.time() at the end`` and exits 0, or
prints one line saying which call failed and why (``eglInitialize failed: EGL_NOT_INITIALIZED``) and exits 1.

Blender can still fail where this passes: after making its context it reads the driver's strings and
extensions (its own list of unsupported GPUs and workarounds), compiles its built-in shaders and
allocates its buffers, none of which happens here; a driver that makes a context but fails on first
real use, or runs out of GPU memory, fails there, not here.  Those failures are Blender's reports,
not a crash of a context it never got, and the bake reports them as errors.
"""

import ctypes
import sys
import time

EGL_DEFAULT_DISPLAY = EGL_NO_DISPLAY = EGL_NO_CONTEXT = EGL_NO_SURFACE = None  # null pointers, in ctypes
EGL_EXTENSIONS = 0x3055
EGL_NONE = 0x3038
EGL_OPENGL_API = 0x30A2
EGL_PLATFORM_SURFACELESS_MESA = 0x31DD
CONFIG = (0x3040, 0x0008,  # EGL_RENDERABLE_TYPE: EGL_OPENGL_BIT
          0x3024, 8, 0x3023, 8, 0x3022, 8,  # EGL_RED_SIZE, EGL_GREEN_SIZE, EGL_BLUE_SIZE
          0x3033, 0x0001,  # EGL_SURFACE_TYPE: EGL_PBUFFER_BIT
          EGL_NONE)
PBUFFER = (0x3057, 1, 0x3056, 1, EGL_NONE)  # EGL_WIDTH, EGL_HEIGHT
CONTEXT_VERSIONS = ((4, 6), (4, 5), (4, 4), (4, 3))  # Blender 5.2 needs OpenGL 4.3
EGL_CONTEXT_MAJOR_VERSION, EGL_CONTEXT_MINOR_VERSION = 0x3098, 0x30FB
EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT = 0x30FD, 0x0001
GL_RENDERER, GL_VERSION = 0x1F01, 0x1F02
ERRORS = ("EGL_SUCCESS", "EGL_NOT_INITIALIZED", "EGL_BAD_ACCESS", "EGL_BAD_ALLOC", "EGL_BAD_ATTRIBUTE",
          "EGL_BAD_CONFIG", "EGL_BAD_CONTEXT", "EGL_BAD_CURRENT_SURFACE", "EGL_BAD_DISPLAY", "EGL_BAD_MATCH",
          "EGL_BAD_NATIVE_PIXMAP", "EGL_BAD_NATIVE_WINDOW", "EGL_BAD_PARAMETER", "EGL_BAD_SURFACE",
          "EGL_CONTEXT_LOST")  # 0x3000 onwards


class ProbeFailed(Exception):
    """The one-line reason Blender would get no context."""


def attributes(values) -> ctypes.Array:
    return (ctypes.c_int32 * len(values))(*values)


class EGL:
    """libEGL.so.1 (glvnd's dispatcher, as Blender's libepoxy loads it) with the signatures the probe calls."""

    SIGNATURES = {
        "eglGetError": (ctypes.c_int32,),
        "eglGetDisplay": (ctypes.c_void_p, ctypes.c_void_p),
        "eglInitialize": (ctypes.c_uint, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(ctypes.c_int32)),
        "eglTerminate": (ctypes.c_uint, ctypes.c_void_p),
        "eglQueryString": (ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int32),
        "eglGetProcAddress": (ctypes.c_void_p, ctypes.c_char_p),
        "eglBindAPI": (ctypes.c_uint, ctypes.c_uint),
        "eglChooseConfig": (ctypes.c_uint, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int32),
                            ctypes.POINTER(ctypes.c_void_p), ctypes.c_int32, ctypes.POINTER(ctypes.c_int32)),
        "eglCreatePbufferSurface": (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int32)),
        "eglDestroySurface": (ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p),
        "eglCreateContext": (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                             ctypes.POINTER(ctypes.c_int32)),
        "eglDestroyContext": (ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p),
        "eglMakeCurrent": (ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p),
    }

    def __init__(self):
        try:
            library = ctypes.CDLL("libEGL.so.1")
        except OSError as error:
            raise ProbeFailed(f"libEGL.so.1 could not be loaded: {error}") from None
        for name, (result, *arguments) in self.SIGNATURES.items():
            function = getattr(library, name)
            function.restype, function.argtypes = result, arguments
            setattr(self, name, function)

    def failed(self, call: str) -> ProbeFailed:
        code = self.eglGetError()
        name = ERRORS[code - 0x3000] if 0x3000 <= code < 0x3000 + len(ERRORS) else f"EGL error 0x{code:04X}"
        return ProbeFailed(f"{call} failed: {name}")

    def extensions(self, display) -> set[str]:
        return set((self.eglQueryString(display, EGL_EXTENSIONS) or b"").decode(errors="replace").split())


def open_display(egl: EGL):
    """The default display, or Mesa's surfaceless platform where that does not initialize (as Blender retries)."""
    major, minor = ctypes.c_int32(0), ctypes.c_int32(0)
    display = egl.eglGetDisplay(EGL_DEFAULT_DISPLAY)
    if display == EGL_NO_DISPLAY:
        raise egl.failed("eglGetDisplay(EGL_DEFAULT_DISPLAY)")
    if egl.eglInitialize(display, major, minor) and (major.value, minor.value) != (0, 0):
        return display, (major.value, minor.value)
    first = egl.failed("eglInitialize")
    egl.eglTerminate(display)
    if "EGL_MESA_platform_surfaceless" not in egl.extensions(EGL_NO_DISPLAY):
        raise first
    address = egl.eglGetProcAddress(b"eglGetPlatformDisplayEXT")
    if not address:
        raise first
    get_platform_display = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p)(address)
    display = get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, None)
    if not egl.eglInitialize(display, major, minor):
        raise ProbeFailed(f"{first}; on Mesa's surfaceless platform: {egl.failed('eglInitialize')}")
    return display, (major.value, minor.value)


def create_context(egl: EGL, display, config, version: tuple[int, int]):
    """The first core-profile context of the versions Blender asks for, newest first."""
    can_ask = version >= (1, 5) or "EGL_KHR_create_context" in egl.extensions(display)
    failure = None
    for major, minor in CONTEXT_VERSIONS if can_ask else ((0, 0),):
        asked = (EGL_CONTEXT_MAJOR_VERSION, major, EGL_CONTEXT_MINOR_VERSION, minor,
                 EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT) if can_ask else ()
        context = egl.eglCreateContext(display, config, EGL_NO_CONTEXT, attributes((*asked, EGL_NONE)))
        if context != EGL_NO_CONTEXT:
            return context
        failure = egl.failed("eglCreateContext (OpenGL 4.3 to 4.6, core profile)")
    raise failure


def gl_strings(egl: EGL) -> tuple[str, str]:
    """GL_RENDERER and GL_VERSION of the current context, through EGL's own lookup (glvnd's dispatch)."""
    address = egl.eglGetProcAddress(b"glGetString")
    if not address:
        raise ProbeFailed("eglGetProcAddress(glGetString) found nothing")
    get_string = ctypes.CFUNCTYPE(ctypes.c_char_p, ctypes.c_uint)(address)
    renderer, version = get_string(GL_RENDERER), get_string(GL_VERSION)
    if not renderer or not version:
        raise ProbeFailed("glGetString returned nothing with the context current")
    return renderer.decode(errors="replace"), version.decode(errors="replace")


def gl_version(text: str) -> tuple[int, int]:
    """``4.5 (Core Profile) Mesa 22.3.6`` or ``4.6.0 NVIDIA 580.159.04``: (4, 5), (4, 6)."""
    major, _, rest = text.partition(".")
    minor = "".join(c for c in rest[:3] if c.isdigit()) or "0"
    return (int(major), int(minor[:1])) if major.isdigit() else (0, 0)


def probe() -> tuple[str, str]:
    """Blender's headless context, made, read and released: (renderer, GL version)."""
    egl = EGL()
    display, version = open_display(egl)
    try:
        if version < (1, 2):
            raise ProbeFailed(f"EGL {version[0]}.{version[1]} cannot bind the OpenGL API (Blender needs EGL 1.2)")
        egl.eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT)
        if not egl.eglBindAPI(EGL_OPENGL_API):
            raise egl.failed("eglBindAPI(EGL_OPENGL_API)")
        config, count = ctypes.c_void_p(), ctypes.c_int32(0)
        if not egl.eglChooseConfig(display, attributes(CONFIG), ctypes.byref(config), 1, count):
            raise egl.failed("eglChooseConfig")
        if count.value != 1:
            raise ProbeFailed("eglChooseConfig found no OpenGL config with 8-bit RGB and pbuffers")
        surface = egl.eglCreatePbufferSurface(display, config, attributes(PBUFFER))
        if surface == EGL_NO_SURFACE:
            raise egl.failed("eglCreatePbufferSurface (1x1)")
        context = create_context(egl, display, config, version)
        try:
            if not egl.eglMakeCurrent(display, surface, surface, context):
                raise egl.failed("eglMakeCurrent")
            renderer, gl = gl_strings(egl)
        finally:
            egl.eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT)
            egl.eglDestroyContext(display, context)
            egl.eglDestroySurface(display, surface)
    finally:
        egl.eglTerminate(display)
    if gl_version(gl) < (4, 3):
        raise ProbeFailed(f"{renderer} gives OpenGL {gl}; Blender needs 4.3")
    return renderer, gl


def main() -> int:
    started = time.perf_counter()
    try:
        renderer, version = probe()
    except ProbeFailed as reason:
        print(reason, flush=True)
        return 1
    print(f"{renderer}\t{version}\t{time.perf_counter() - started:.4f}\t{time.time():.6f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
