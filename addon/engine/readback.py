"""Finished frames off the GPU without stalling the next one.

Readback in Blender's ``gpu`` module is synchronous, so the bake keeps two
targets: frame N is copied to one (``store``) and read from it (``read``)
only after frame N+1's work is queued on the GPU.  EXR frames come back as
half floats packed two to a word (half the bytes, and what EXR stores); PNG
frames as float32, which OpenColorIO then transforms in place.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .kernels import Constant, Image, Kernel

FRAME_OUT = Kernel(
    "frame_out",
    images=(Image("frame", "RGBA32F", "READ"), Image("target", "RGBA32F", "WRITE")),
    constants=(Constant("IVEC2", "target_size"),),
    local_size=(16, 16, 1),
    includes=(),
)
FRAME_OUT_HALF = dataclasses.replace(
    FRAME_OUT, images=(FRAME_OUT.images[0], Image("target", "R32UI", "WRITE")), defines=(("HALF_TARGET", "1"),)
)


class FrameReadback:
    """Alternating readback targets of one frame size; ``half``: RGBA half floats, else RGBA float32."""

    def __init__(self, host, width: int, height: int, half: bool, targets: int = 2):
        self.host, self.width, self.height, self.half = host, width, height, half
        self.kernel = FRAME_OUT_HALF if half else FRAME_OUT
        self.targets = [host.texture(f"readback_{n}", 2 * width if half else width, height,
                                     "R32UI" if half else "RGBA32F") for n in range(targets)]
        self._next = 0

    def store(self, frame) -> int:
        """Queue the copy of ``frame`` (the compositor's RGBA32F texture); the target's index for :meth:`read`."""
        index, self._next = self._next, (self._next + 1) % len(self.targets)
        self.host.dispatch(self.kernel, self.kernel.groups_for(self.width, self.height),
                           {"frame": frame, "target": self.targets[index]}, {"target_size": (self.width, self.height)})
        return index

    def buffer(self):
        """Host memory for one frame in flight (see :meth:`read`)."""
        return self.host.readback_buffer(self.targets[0])

    def read(self, index: int, buffer) -> np.ndarray:
        """The stored frame as (height, width, 4) float16 or float32, rows bottom to top, viewing ``buffer``."""
        words = self.host.read_into(self.targets[index], buffer)
        return words.view(np.float16).reshape(self.height, self.width, 4) if self.half else words
