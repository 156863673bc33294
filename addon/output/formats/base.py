"""What every output format of the bake is: one small interface, one module a kind (``png.py``, ``exr.py``)."""

from __future__ import annotations

import os
import sys
import threading
from abc import ABC, abstractmethod
from concurrent.futures import Executor, Future
from typing import ClassVar

import numpy as np

from ...engine.draw.readback import ReadbackLayout
from ..display import DisplaySettings


class FrameFormat(ABC):
    """One kind of frame file: what the bake asks of the GPU for it, and how a writer thread makes the file from a
    frame read back.  A kind is a frozen dataclass of the scene's settings, made on the main thread
    (:meth:`from_scene`) and only read after (by the writer threads, and pickled to a benchmark's writer
    processes)."""

    label: ClassVar[str]  # the name the bake's messages give it
    extension: ClassVar[str]  # the frame files' suffix
    depth: str  # OpenImageIO's pixel type of the file: 'half', 'uint8', 'uint16'

    @classmethod
    @abstractmethod
    def from_scene(cls, scene) -> FrameFormat:
        """The scene's output settings as the writers need them; ValueError for settings the bake cannot write."""

    @property
    @abstractmethod
    def readback(self) -> ReadbackLayout:
        """How frames come back from the GPU for this file (engine/draw/readback.py)."""

    @abstractmethod
    def attributes(self) -> dict[str, object]:
        """OpenImageIO attributes of the file, set in this order (``frame_writer.encode``)."""

    @property
    def gpu_display(self) -> DisplaySettings | None:
        """The display transform the GPU applies as frames are read back (``readback`` is then a ``"DISPLAY"``
        layout; display_shader.py makes the shader), or None."""
        return None

    def converter(self, pool: Executor) -> Future | None:
        """What :meth:`file_pixels` needs that is slow to make, submitted to ``pool`` (the writer threads) so it
        is made while the GPU starts, or None; raises now for what cannot be made."""
        return None

    def codec_threads(self, nice: int, pool: bool):
        """The encoder library's own threads as the writers want them while they live (``restore()`` puts them
        back), or None: ``nice``, the writers' priority below the caller's; ``pool``, whether the library's
        shared pool compresses rather than each writer thread."""
        return None

    def file_pixels(self, pixels: np.ndarray, converter) -> np.ndarray:
        """What goes into the file from a frame as :attr:`readback` left it (``converter``: what :meth:`converter`
        made), on a writer thread: top row first, as read back, and contiguous (OpenImageIO copies strided
        arrays slowly: a flipped view cost 60 ms more per 1080p EXR here).  By default the values as read back:
        a copy only where an RGB row ends inside a word (readback.py)."""
        return np.ascontiguousarray(pixels)


def lower_priority(niceness: int) -> None:
    """Raise the calling thread's nice value by ``niceness``; threads it starts inherit it.  Linux only (where
    nice is per thread; elsewhere it would slow the whole process, main thread included).  Anyone may lower
    their own priority; where the OS refuses, the thread keeps its own."""
    if niceness <= 0 or sys.platform != "linux":
        return
    thread = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, thread, min(19, os.getpriority(os.PRIO_PROCESS, thread) + niceness))
    except OSError:
        pass
