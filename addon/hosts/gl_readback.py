"""Frames read back without waiting: ``glReadPixels`` into a pixel-pack buffer, handed over once the GPU is done.

Blender's ``gpu`` module reads synchronously, and GL runs in order, so reading frame N after
frame N+1's work is queued (``FrameReadback``'s two targets) also waits for frame N+1 (measured:
``bench/results/nvidia-h100-80gb-hbm3-pcie-sse2-2026-11-23-bake-readback.json``).  With a pixel-pack buffer bound,
``glReadPixels`` only queues the copy; a fence after it says when that copy is done, and the
buffer's memory, mapped for good when it was made, goes to a writer thread as it is (no copy on
the main thread) until the writer gives it back.  The calls go to the context Blender made current
(``gl_native.py``), so only its OpenGL backend has this; elsewhere the bake reads through
Blender's API.  ``GPU_PARTICLES_READBACK=sync`` in the environment turns it off (benchmarks
compare the two; a driver that misbehaves can be worked around).
"""

from __future__ import annotations

import ctypes
import os
import sys
import time

import numpy as np

from .gl_native import gl_function, gl_library, software

GL_PIXEL_PACK_BUFFER = 0x88EB
GL_MAP_READ_BIT, GL_MAP_PERSISTENT_BIT, GL_MAP_COHERENT_BIT, GL_CLIENT_STORAGE_BIT = 0x0001, 0x0040, 0x0080, 0x0200
STORAGE_FLAGS = GL_MAP_READ_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT  # mapped for good, GPU writes seen
GL_SYNC_GPU_COMMANDS_COMPLETE = 0x9117
GL_ALREADY_SIGNALED, GL_CONDITION_SATISFIED, GL_WAIT_FAILED = 0x911A, 0x911C, 0x911D
GL_FRAMEBUFFER_BARRIER_BIT = 0x0400
GL_COLOR_ATTACHMENT0 = 0x8CE0
GL_RED, GL_RED_INTEGER, GL_RGBA, GL_UNSIGNED_INT, GL_FLOAT = 0x1903, 0x8D94, 0x1908, 0x1405, 0x1406
PIXEL_TYPES = {"R32UI": (GL_RED_INTEGER, GL_UNSIGNED_INT), "R32F": (GL_RED, GL_FLOAT), "RGBA32F": (GL_RGBA, GL_FLOAT)}
POLL_S = 0.0001  # between looks at a fence
ENVIRONMENT = "GPU_PARTICLES_READBACK"

_u, _i, _p, _s = ctypes.c_uint, ctypes.c_int, ctypes.c_void_p, ctypes.c_ssize_t
_SIGNATURES = {  # name: (argument types, result type); GL 4.4 core or ARB_buffer_storage
    "glGenBuffers": ([_i, ctypes.POINTER(_u)], None),
    "glDeleteBuffers": ([_i, ctypes.POINTER(_u)], None),
    "glBindBuffer": ([_u, _u], None),
    "glBufferStorage": ([_u, _s, _p, _u], None),
    "glMapBufferRange": ([_u, _s, _s, _u], _p),
    "glUnmapBuffer": ([_u], ctypes.c_ubyte),
    "glReadBuffer": ([_u], None),
    "glReadPixels": ([_i, _i, _i, _i, _u, _u, _p], None),
    "glMemoryBarrier": ([_u], None),
    "glFenceSync": ([_u, _u], _p),
    "glClientWaitSync": ([_p, _u, ctypes.c_uint64], _u),
    "glDeleteSync": ([_p], None),
    "glFlush": ([], None),
}


class PixelPack:
    """The GL calls an asynchronous readback makes, looked up once."""

    def __init__(self, functions: dict):
        self.__dict__.update(functions)

    @classmethod
    def load(cls, backend: str, renderer: str = "", platform: str = sys.platform) -> PixelPack | None:
        """The calls when Blender draws with OpenGL on a hardware GPU and the library has every one (else
        None: Blender's synchronous readback); None too when the environment asks for that
        (``GPU_PARTICLES_READBACK=sync``).  A software renderer's "GPU" is the CPU: there is no copy to
        overlap, and with it Mesa's llvmpipe crashed later in unrelated draws of a long test run (three
        full suites in three, 2026-11-23; none with Blender's read), so the tests force it only where
        they test it."""
        if os.environ.get(ENVIRONMENT, "").lower() == "sync" or software(renderer):
            return None
        library = gl_library(backend, platform)
        if library is None:
            return None
        functions = {name: gl_function(library, name, *signature) for name, signature in _SIGNATURES.items()}
        return cls(functions) if all(functions.values()) else None

    def buffer(self, texture_format: str, shape: tuple[int, ...], dtype) -> PixelPackBuffer:
        return PixelPackBuffer(self, texture_format, shape, np.dtype(dtype))

    def fence(self):
        """A fence after everything queued so far, sent to the GPU."""
        fence = self.glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0)
        self.glFlush()
        return fence

    def sleep_until(self, fence) -> None:
        """Wait for ``fence`` asleep: the driver's own waits (a synchronous read, a blocking
        glClientWaitSync) may spin, taking a core from the writer threads the whole time."""
        while True:
            status = self.glClientWaitSync(fence, 0, 0)
            if status in (GL_ALREADY_SIGNALED, GL_CONDITION_SATISFIED):
                return
            if status == GL_WAIT_FAILED:
                raise RuntimeError("waiting for the GPU failed (glClientWaitSync)")
            time.sleep(POLL_S)

    def sleep_until_idle(self) -> None:
        """Wait asleep until the GPU has done everything queued."""
        fence = self.fence()
        try:
            self.sleep_until(fence)
        finally:
            self.glDeleteSync(fence)


class PixelPackBuffer:
    """Host memory for one frame in flight: a GL pixel-pack buffer with immutable storage, mapped once for
    its whole life (persistent, coherent) as a read-only array; ``start`` queues the read of the bound
    framebuffer into it, ``wait`` returns the array once that read is done.  (Mapped for good rather than
    every frame, by measurement: ``bench/bake_throughput.py --readback``, bench/README.md, Bake.)"""

    def __init__(self, gl: PixelPack, texture_format: str, shape: tuple[int, ...], dtype: np.dtype):
        self.gl, self.pixel_type = gl, PIXEL_TYPES[texture_format]
        self.fence = None
        nbytes = int(np.prod(shape)) * dtype.itemsize
        name = _u()
        gl.glGenBuffers(1, ctypes.byref(name))
        self.name = name.value
        gl.glBindBuffer(GL_PIXEL_PACK_BUFFER, self.name)
        gl.glBufferStorage(GL_PIXEL_PACK_BUFFER, nbytes, None, STORAGE_FLAGS | GL_CLIENT_STORAGE_BIT)
        address = gl.glMapBufferRange(GL_PIXEL_PACK_BUFFER, 0, nbytes, STORAGE_FLAGS)
        gl.glBindBuffer(GL_PIXEL_PACK_BUFFER, 0)
        if not address:
            self.free()
            raise RuntimeError("no host memory for reading frames back (glMapBufferRange failed)")
        self.array = np.frombuffer((ctypes.c_ubyte * nbytes).from_address(address), dtype).reshape(shape)
        self.array.flags.writeable = False

    def start(self, width: int, height: int) -> None:
        """Queue the copy of the bound framebuffer's first color attachment (written by a compute kernel)."""
        gl = self.gl
        gl.glMemoryBarrier(GL_FRAMEBUFFER_BARRIER_BIT)  # image stores before, framebuffer reads after
        gl.glBindBuffer(GL_PIXEL_PACK_BUFFER, self.name)
        gl.glReadBuffer(GL_COLOR_ATTACHMENT0)
        gl.glReadPixels(0, 0, width, height, *self.pixel_type, None)  # into the bound buffer, offset 0
        gl.glBindBuffer(GL_PIXEL_PACK_BUFFER, 0)
        self._drop_fence()
        self.fence = gl.fence()  # flushed: the copy goes to the GPU now, not when the next frame fills the queue

    def wait(self) -> np.ndarray:
        """The frame, once its copy is done: rows bottom first, as GL reads them, read-only (valid until
        the next ``start``)."""
        self.gl.sleep_until(self.fence)
        self._drop_fence()
        return self.array

    def free(self) -> None:
        """Unmap and delete (main thread, once no one reads ``array``)."""
        self._drop_fence()
        if self.name:
            self.gl.glBindBuffer(GL_PIXEL_PACK_BUFFER, self.name)
            self.gl.glUnmapBuffer(GL_PIXEL_PACK_BUFFER)
            self.gl.glBindBuffer(GL_PIXEL_PACK_BUFFER, 0)
            self.gl.glDeleteBuffers(1, ctypes.byref(_u(self.name)))
            self.name = 0
        self.array = None

    def _drop_fence(self) -> None:
        if self.fence:
            self.gl.glDeleteSync(self.fence)
        self.fence = None
