"""OpenEXR frames: linear, premultiplied half float RGBA as read back, whatever the scene's color mode and depth.

Compressed on the writer threads themselves (OpenEXR's shared pool off while the
writer lives: its threads run at the main thread's priority), or by that pool
niced with the writers (:class:`ExrThreads`; bench/exr_encode.py measures both).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import ClassVar

from ...engine.draw.readback import HALF_RGBA, ReadbackLayout
from ..display import image_modules
from .base import FrameFormat, lower_priority

# ZIP (Blender's default codec) at deflate level 1, not OpenEXR's 4 that Blender writes: the same lossless pixels,
# a faster bake of frames covered by lit smoke for slightly larger files, and sparse frames cost the same at either
# level (bench/README.md, "EXR encoding"; the levels' CPU cost on a sparse frame:
# bench/results/nvidia-h100-80gb-hbm3-pcie-sse2-2026-11-25-exr-encode.json).
ZIP_LEVEL = 1


@dataclass(frozen=True)
class ExrFormat(FrameFormat):
    label: ClassVar[str] = "OpenEXR"
    extension: ClassVar[str] = ".exr"
    depth: ClassVar[str] = "half"
    compression: str  # OpenImageIO 'compression' attribute: the scene's EXR codec

    @classmethod
    def from_scene(cls, scene) -> ExrFormat:
        codec = scene.render.image_settings.exr_codec.lower()
        return cls(compression=f"{codec}:{ZIP_LEVEL}" if codec == "zip" else codec)

    @property
    def readback(self) -> ReadbackLayout:
        return HALF_RGBA

    def attributes(self) -> dict[str, object]:
        return {"compression": self.compression}

    def codec_threads(self, nice: int, pool: bool) -> ExrThreads | None:
        """OpenEXR's pool remade niced (``pool``) or turned off; as it is for writers at the caller's priority."""
        if nice > 0 or not pool:
            return ExrThreads(None if pool else -1, nice)
        return None


class ExrThreads:
    """OpenEXR's shared thread pool as a writer wants it, put back by ``restore()``.

    ``threads``: OpenImageIO's ``exr_threads`` (-1: no pool, each EXR is compressed on the thread that writes
    it; None: as it is).  OpenEXR makes the pool when the next EXR writer is created, starting its threads
    from the creating thread: made here on a thread niced by ``nice``, they inherit it."""

    def __init__(self, threads: int | None, nice: int = 0):
        self.oiio, _ = image_modules()
        self.before = self.oiio.get_int_attribute("exr_threads")
        maker = threading.Thread(target=self._remake, args=(self.before if threads is None else threads, nice),
                                 name="gpu_particles_exr_pool")
        maker.start()
        maker.join()

    def _remake(self, threads: int, nice: int = 0) -> None:
        lower_priority(nice)
        for count in dict.fromkeys((-1, threads)):  # -1 first: OpenEXR keeps a pool of the same size as it is
            self.oiio.attribute("exr_threads", count)
            self.oiio.ImageOutput.create("pool.exr")  # no file: the constructor sizes OpenEXR's pool

    def restore(self) -> None:
        """The attribute as it was; the pool's threads (if any) at the caller's priority."""
        self._remake(self.before)
