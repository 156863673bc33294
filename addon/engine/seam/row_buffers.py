"""Reused host memory for readbacks that writer threads hold on to (the point caches' bodies, the VDB leaves).

A fresh buffer each frame is pages to fault in: on the H100, ``GPUTexture.read`` into new memory took twice the
time of ``read_color`` into a reused buffer (bench/results/nvidia-h100-80gb-hbm3-pcie-sse2-2026-11-23-readback.json).
"""

from __future__ import annotations

import math
import queue
from collections.abc import Callable


class RowBuffers:
    """Host memory to read ``textures``' rows into (``Host.read_rows``) and hand to a writer thread (the point
    caches' bodies, the VDB leaves): ``take`` gives buffers a writer gave back, else new ones from
    ``Host.row_buffer`` (as many sets as frames are in flight: a fresh buffer each frame is pages to fault in),
    and the call that gives them back (once; a second call does nothing).  ``read_into`` moves the pool to new
    textures (larger images made for a larger grid): the buffers given back stay in use while they hold a read."""

    def __init__(self, host, textures):
        self.host, self.textures = host, tuple(textures)
        self._given_back = queue.SimpleQueue()

    def read_into(self, textures) -> RowBuffers:
        """This pool, for ``textures`` from now on (the frames in flight give their buffers back to it)."""
        self.textures = tuple(textures)
        return self

    def take(self, rows=None) -> tuple[list, Callable[[], None]]:
        """Buffers for reading ``rows`` rows of each texture (None: all of them), and the call that gives them
        back; a given-back buffer too small for its read is dropped for a new one (of the whole texture)."""
        try:
            buffers = self._given_back.get_nowait()
        except queue.Empty:
            buffers = [None] * len(self.textures)
        rows = rows or [texture.height for texture in self.textures]
        buffers = [buffer if buffer is not None and buffer.array.size >= count * texture.width * _channels(texture)
                   else self.host.row_buffer(texture) for buffer, texture, count in zip(buffers, self.textures, rows)]
        pending = [buffers]

        def give_back() -> None:
            if pending:  # once
                self._given_back.put(pending.pop())
        return buffers, give_back


def _channels(texture) -> int:
    """The values a texel of ``texture`` holds (a row_buffer holds the texture's whole shape)."""
    return math.prod(texture.shape) // (texture.width * texture.height)
