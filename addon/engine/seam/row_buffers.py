"""Reused host memory for readbacks that writer threads hold on to (the point caches' bodies, the VDB leaves).

A fresh buffer each frame is pages to fault in: on the H100, ``GPUTexture.read`` into new memory took twice the
time of ``read_color`` into a reused buffer (bench/results/nvidia-h100-80gb-hbm3-pcie-sse2-2026-11-23-readback.json).
"""

from __future__ import annotations

import queue
from collections.abc import Callable


class RowBuffers:
    """Host memory to read ``textures``' rows into (``Host.read_rows``) and hand to a writer thread (the point
    caches' bodies, the VDB leaves): ``take`` gives buffers a writer gave back, else new ones from
    ``Host.row_buffer`` (as many sets as frames are in flight: a fresh buffer each frame is pages to fault in),
    and the call that gives them back (once; a second call does nothing)."""

    def __init__(self, host, textures):
        self.host, self.textures = host, tuple(textures)
        self._given_back = queue.SimpleQueue()

    def take(self) -> tuple[list, Callable[[], None]]:
        try:
            buffers = self._given_back.get_nowait()
        except queue.Empty:
            buffers = [self.host.row_buffer(texture) for texture in self.textures]
        pending = [buffers]

        def give_back() -> None:
            if pending:  # once
                self._given_back.put(pending.pop())
        return buffers, give_back
