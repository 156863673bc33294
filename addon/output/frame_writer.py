"""Baked frames converted and written on worker threads with Blender's own OpenImageIO and OpenColorIO.

The main thread only reads frames back from the GPU; each worker converts one
frame for its file, as its format says (``formats/``: PNG in the scene's
display colors, as ``Image.save_render`` applies them; EXR linear half float
RGBA as read back), and writes it under a hidden temporary name, renamed when
complete, so a frame appears under its final name only whole.  The calls that
do the work (``CPUProcessor.applyRGBA``, ``ImageOutput.write_image``, numpy on
large arrays) release the GIL, so the workers run in parallel.  The writer
threads run at a lower priority than the main thread, so the main thread's
readback, which feeds them, is not starved (bench/exr_encode.py measures it).
The display transform (OpenColorIO) is here, for formats in display colors:
applied on the CPU by :func:`display_pixels`, on the GPU by display_shader.py.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections import defaultdict, deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # the formats use this module
    from .formats import FrameFormat


class FrameWriteError(RuntimeError):
    """A frame that could not be written (the bake turns it into a BakeError)."""


def image_modules():
    """OpenImageIO and PyOpenColorIO: importable as is in Blender, from Blender's own site-packages in the bpy module."""
    try:
        import OpenImageIO
        import PyOpenColorIO
    except ImportError:
        import bpy

        version = f"python{sys.version_info.major}.{sys.version_info.minor}"
        site = Path(bpy.utils.system_resource("PYTHON")) / "lib" / version / "site-packages"
        if str(site) not in sys.path:
            sys.path.append(str(site))
        import OpenImageIO
        import PyOpenColorIO
    return OpenImageIO, PyOpenColorIO


@dataclass(frozen=True)
class DisplaySettings:
    """What ``save_render`` applies to a PNG: Blender's OCIO config, display, view, look, exposure, gamma."""

    config: str
    display: str
    view: str
    look: str
    exposure: float
    gamma: float
    luma: tuple[float, float, float] = (0.2126, 0.7152, 0.0722)


def display_group(display: DisplaySettings):
    """The OCIO config and the transform Blender builds for writing an image (see blender's
    libocio_display_processor.cc): exposure in scene linear, the look, the display/view transform, then 1/gamma.
    Both paths apply it: :func:`display_processor` on the CPU, ``display_shader.py`` on the GPU."""
    _, ocio = image_modules()
    config = ocio.Config.CreateFromFile(display.config)
    group = ocio.GroupTransform()
    source = config.getColorSpace(ocio.ROLE_SCENE_LINEAR).getName()
    if display.exposure != 0:
        scale = 2.0 ** display.exposure
        group.appendTransform(ocio.MatrixTransform([scale, 0, 0, 0, 0, scale, 0, 0, 0, 0, scale, 0, 0, 0, 0, 1]))
    use_look = display.look not in ("", "None")
    if use_look:
        look_space = config.getLook(display.look).getProcessSpace()
        group.appendTransform(ocio.LookTransform(src=source, dst=look_space, looks=display.look))
        source = look_space
    group.appendTransform(ocio.DisplayViewTransform(src=source, display=display.display, view=display.view,
                                                    looksBypass=use_look))
    if display.gamma != 1:
        exponent = 1.0 / display.gamma
        group.appendTransform(ocio.ExponentTransform([exponent, exponent, exponent, 1.0]))
    return config, group


def display_processor(display: DisplaySettings):
    """The OCIO CPU processor of :func:`display_group`."""
    config, group = display_group(display)
    return config.getProcessor(group).getDefaultCPUProcessor()


def check_display(display: DisplaySettings) -> None:
    """A clear error now for a display, view or look the OCIO config lacks (reading the config is quick;
    building the processor is not, so that happens on a writer thread)."""
    _, ocio = image_modules()
    config = ocio.Config.CreateFromFile(display.config)
    if display.display not in config.getDisplays():
        raise ValueError(f"display '{display.display}' is not in the OpenColorIO config {display.config}")
    if display.view not in config.getViews(display.display):
        raise ValueError(f"view '{display.view}' is not a view of display '{display.display}'")
    if display.look not in ("", "None") and config.getLook(display.look) is None:
        raise ValueError(f"look '{display.look}' is not in the OpenColorIO config {display.config}")


def display_pixels(pixels: np.ndarray, processor, alpha: bool) -> np.ndarray:
    """Linear premultiplied RGBA (float32, changed in place) to what ``save_render`` puts in an 8/16-bit file.

    The one place that decides alpha semantics (compositor work may change them):
    without alpha the premultiplied color is transformed as is and alpha dropped;
    with alpha the file holds straight alpha, as PNG defines it: the color is
    divided by alpha (where it is not 0), then transformed.  Clamping and
    rounding to the file's depth are the writer's (``encode``).
    """
    if alpha:
        color, coverage = pixels[..., :3], pixels[..., 3:]
        np.divide(color, coverage, out=color, where=coverage != 0)
    processor.applyRGBA(pixels)
    return pixels


def quantize(pixels: np.ndarray, channels: int, dtype: np.dtype) -> np.ndarray:
    """Float [0, 1] (scaled in place) to ``dtype``'s full range, the first ``channels`` kept:
    19 ms a 1080p frame here, against 100 ms for OpenImageIO's own float to uint8 conversion."""
    top = np.iinfo(dtype).max
    np.multiply(pixels, top, out=pixels)
    np.add(pixels, 0.5, out=pixels)
    np.clip(pixels, 0.0, top, out=pixels)
    out = np.empty((*pixels.shape[:2], channels), dtype)
    np.copyto(out, pixels[:, :, :channels], casting="unsafe")
    return out


def encode(path: Path, pixels: np.ndarray, frame_format: FrameFormat) -> None:
    """Write what ``frame_format.file_pixels`` made to ``path`` with OpenImageIO, with the format's attributes."""
    oiio, _ = image_modules()
    height, width, channels = pixels.shape
    spec = oiio.ImageSpec(width, height, channels, frame_format.depth)
    for name, value in frame_format.attributes().items():
        spec.attribute(name, value)
    output = oiio.ImageOutput.create(str(path))
    if output is None:
        raise OSError(f"no image writer for '{path.name}': {oiio.geterror()}")
    if not output.open(str(path), spec):
        raise OSError(output.geterror())
    written = output.write_image(pixels)
    closed = output.close()
    if not (written and closed):
        raise OSError(output.geterror() or "the image could not be written")


class StageClock:
    """Seconds spent per stage, summed over threads (``add`` is thread-safe)."""

    def __init__(self):
        self.seconds = defaultdict(float)
        self._lock = threading.Lock()

    def reset(self) -> None:
        with self._lock:
            self.seconds.clear()

    def add(self, stage: str, started: float) -> float:
        now = time.perf_counter()
        with self._lock:
            self.seconds[stage] += now - started
        return now


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


WRITER_NICE = 10  # writer threads' nice value above the main thread's: see bench/exr_encode.py


class FrameWriter:
    """A pool of writer threads; ``submit`` queues a frame, ``collect`` reports what is on disk (or the failure).

    ``nice``: the writer threads' priority below the caller's (and the encoder's own pool's, with ``exr_pool``:
    ``FrameFormat.codec_threads``); ``exr_pool``: EXR frames compressed by OpenEXR's shared thread pool rather
    than each on its writer thread (the pool, niced, was the faster: bench/results/nvidia-h100-80gb-hbm3-pcie-sse2-2026-11-23-exr-bake.json)."""

    def __init__(self, frame_format: FrameFormat, workers: int | None = None, nice: int = WRITER_NICE,
                 exr_pool: bool = True, clock: StageClock | None = None):
        self.format = frame_format
        self.workers = workers or os.process_cpu_count() or 1
        self.clock = clock or StageClock()  # seconds per stage, summed over the workers
        self._codec_threads = frame_format.codec_threads(nice, exr_pool)
        self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="gpu_particles_writer",
                                        initializer=lower_priority, initargs=(nice,))
        self._converter = frame_format.converter(self._pool)  # a future, made while the GPU starts
        self._queued = deque()  # (frame, final path, future), in frame order
        self.written: list[Path] = []
        self.failed = False

    def submit(self, frame: int, path: Path, pixels: np.ndarray, release=None) -> None:
        """Convert and write ``pixels`` to ``path`` on a worker; ``release()`` runs when the pixels are no longer used."""
        self._queued.append((frame, path, self._pool.submit(self._write, path, pixels, release)))

    def _write(self, path: Path, pixels: np.ndarray, release) -> None:
        partial = path.with_name(f".{path.name}.partial{path.suffix}")
        try:
            started = time.perf_counter()
            data = self.format.file_pixels(pixels, self._converter and self._converter.result())
            started = self.clock.add("convert", started)
            encode(partial, data, self.format)
            started = self.clock.add("encode+write", started)
            os.replace(partial, path)
            self.clock.add("rename", started)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        finally:
            if release is not None:
                release()

    def collect(self, wait: bool = False) -> None:
        """Move finished frames (in frame order) to ``written``; raise FrameWriteError for the first failure,
        after cancelling the frames not yet started and waiting for those being written."""
        while self._queued and (wait or self._queued[0][2].done()):
            frame, path, future = self._queued[0]
            error = future.exception()
            if error is not None:
                self.failed = True
                self.close(cancel=True)
                # Without its traceback: the worker's frames hold frame buffers (GPU memory) in a cycle.
                raise FrameWriteError(f"Could not write frame {frame} to '{path}': {_reason(error)}") from \
                    error.with_traceback(None)
            self._queued.popleft()
            self.written.append(path)

    def close(self, cancel: bool = False) -> None:
        """Wait for every queued frame (``cancel``: drop those not started yet); keep what was written whole."""
        for _, _, future in self._queued if cancel else ():
            future.cancel()
        self._pool.shutdown(wait=True)
        if self._codec_threads is not None:
            self._codec_threads.restore()
            self._codec_threads = None
        for _, path, future in self._queued:
            if not future.cancelled() and future.exception() is None:
                self.written.append(path)
        self._queued.clear()


def _reason(error: BaseException) -> str:
    return error.strerror if isinstance(error, OSError) and error.strerror else str(error)
