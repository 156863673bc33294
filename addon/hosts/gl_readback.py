"""Frames read back without waiting: ``glReadPixels`` into a pixel-pack buffer, mapped once the GPU is done.

Blender's ``gpu`` module reads synchronously, and GL runs in order, so reading frame N after
frame N+1's work is queued (``FrameReadback``'s two targets) also waits for frame N+1: on the H100
the 4K EXR bake's main thread spent about 30 ms a frame there.  With a pixel-pack buffer bound,
``glReadPixels`` only queues the copy; a fence after it says when that copy is done, and the
buffer is then mapped and handed to a writer thread as it is (no copy on the main thread),
unmapped when the writer gives it back.  The calls go to the context Blender made current
(``gl_native.py``), so only its OpenGL backend has this; elsewhere the bake reads through
Blender's API.  ``GPU_PARTICLES_READBACK=sync`` in the environment turns it off (benchmarks
compare the two; a driver that misbehaves can be worked around).
"""

from __future__ import annotations

import ctypes
import os
import sys

import numpy as np

from .gl_native import gl_function, gl_library

GL_PIXEL_PACK_BUFFER = 0x88EB
GL_STREAM_READ = 0x88E1
GL_MAP_READ_BIT = 0x0001
GL_SYNC_GPU_COMMANDS_COMPLETE = 0x9117
GL_SYNC_FLUSH_COMMANDS_BIT = 0x0001
GL_ALREADY_SIGNALED, GL_CONDITION_SATISFIED, GL_WAIT_FAILED = 0x911A, 0x911C, 0x911D
GL_FRAMEBUFFER_BARRIER_BIT = 0x0400
GL_COLOR_ATTACHMENT0 = 0x8CE0
GL_RED_INTEGER, GL_RGBA, GL_UNSIGNED_INT, GL_FLOAT = 0x8D94, 0x1908, 0x1405, 0x1406
PIXEL_TYPES = {"R32UI": (GL_RED_INTEGER, GL_UNSIGNED_INT), "RGBA32F": (GL_RGBA, GL_FLOAT)}
WAIT_NS = 1_000_000_000  # one fence wait; a copy that takes longer is waited for again
ENVIRONMENT = "GPU_PARTICLES_READBACK"

_u, _i, _p, _s = ctypes.c_uint, ctypes.c_int, ctypes.c_void_p, ctypes.c_ssize_t
_SIGNATURES = {  # name: (argument types, result type); GL 3.2 core
    "glGenBuffers": ([_i, ctypes.POINTER(_u)], None),
    "glDeleteBuffers": ([_i, ctypes.POINTER(_u)], None),
    "glBindBuffer": ([_u, _u], None),
    "glBufferData": ([_u, _s, _p, _u], None),
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
    def load(cls, backend: str, platform: str = sys.platform) -> PixelPack | None:
        """The calls when Blender draws with OpenGL and the library has every one (else None: Blender's
        synchronous readback); None too when the environment asks for that (``GPU_PARTICLES_READBACK=sync``)."""
        if os.environ.get(ENVIRONMENT, "").lower() == "sync":
            return None
        library = gl_library(backend, platform)
        if library is None:
            return None
        functions = {name: gl_function(library, name, *signature) for name, signature in _SIGNATURES.items()}
        return cls(functions) if all(functions.values()) else None

    def buffer(self, texture_format: str, shape: tuple[int, ...], dtype) -> PixelPackBuffer:
        return PixelPackBuffer(self, texture_format, shape, np.dtype(dtype))


class PixelPackBuffer:
    """Host memory for one frame in flight: a GL pixel-pack buffer (``start`` queues the read of the
    bound framebuffer into it) mapped by ``wait`` as a read-only array until ``unmap`` (main thread only)."""

    def __init__(self, gl: PixelPack, texture_format: str, shape: tuple[int, ...], dtype: np.dtype):
        self.gl, self.pixel_type, self.shape, self.dtype = gl, PIXEL_TYPES[texture_format], shape, dtype
        self.nbytes = int(np.prod(shape)) * dtype.itemsize
        name = _u()
        gl.glGenBuffers(1, ctypes.byref(name))
        self.name = name.value
        gl.glBindBuffer(GL_PIXEL_PACK_BUFFER, self.name)
        gl.glBufferData(GL_PIXEL_PACK_BUFFER, self.nbytes, None, GL_STREAM_READ)
        gl.glBindBuffer(GL_PIXEL_PACK_BUFFER, 0)
        self.fence = None
        self.array = None  # the mapped frame, between wait() and unmap()

    def start(self, width: int, height: int) -> None:
        """Queue the copy of the bound framebuffer's first color attachment (written by a compute kernel)."""
        gl = self.gl
        self.unmap()
        gl.glMemoryBarrier(GL_FRAMEBUFFER_BARRIER_BIT)  # image stores before, framebuffer reads after
        gl.glBindBuffer(GL_PIXEL_PACK_BUFFER, self.name)
        gl.glReadBuffer(GL_COLOR_ATTACHMENT0)
        gl.glReadPixels(0, 0, width, height, *self.pixel_type, None)  # into the bound buffer, offset 0
        gl.glBindBuffer(GL_PIXEL_PACK_BUFFER, 0)
        self._drop_fence()
        self.fence = gl.glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0)
        gl.glFlush()  # the copy goes to the GPU now, not when the next frame's work fills the queue

    def wait(self) -> np.ndarray:
        """The frame, once its copy is done: rows bottom first, as GL reads them, read-only."""
        gl = self.gl
        while gl.glClientWaitSync(self.fence, GL_SYNC_FLUSH_COMMANDS_BIT, WAIT_NS) not in (
                GL_ALREADY_SIGNALED, GL_CONDITION_SATISFIED):
            if gl.glClientWaitSync(self.fence, 0, 0) == GL_WAIT_FAILED:
                raise RuntimeError("the GPU did not finish reading a frame back (glClientWaitSync failed)")
        self._drop_fence()
        gl.glBindBuffer(GL_PIXEL_PACK_BUFFER, self.name)
        address = gl.glMapBufferRange(GL_PIXEL_PACK_BUFFER, 0, self.nbytes, GL_MAP_READ_BIT)
        gl.glBindBuffer(GL_PIXEL_PACK_BUFFER, 0)
        if not address:
            raise RuntimeError("a frame read back could not be mapped (glMapBufferRange failed)")
        memory = (ctypes.c_ubyte * self.nbytes).from_address(address)
        self.array = np.frombuffer(memory, self.dtype).reshape(self.shape)
        self.array.flags.writeable = False
        return self.array

    def unmap(self) -> None:
        """Give the memory back to GL (after its user is done with ``array``)."""
        if self.array is not None:
            self.array = None
            self.gl.glBindBuffer(GL_PIXEL_PACK_BUFFER, self.name)
            self.gl.glUnmapBuffer(GL_PIXEL_PACK_BUFFER)
            self.gl.glBindBuffer(GL_PIXEL_PACK_BUFFER, 0)

    def free(self) -> None:
        self.unmap()
        self._drop_fence()
        if self.name:
            self.gl.glDeleteBuffers(1, ctypes.byref(_u(self.name)))
            self.name = 0

    def _drop_fence(self) -> None:
        if self.fence:
            self.gl.glDeleteSync(self.fence)
        self.fence = None
