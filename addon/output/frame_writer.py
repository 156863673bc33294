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
The display transform the formats apply is in display.py.
"""

from __future__ import annotations

import os
import threading
import time
from collections import defaultdict, deque
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from .display import image_modules
from .formats.base import FrameFormat, lower_priority


class FrameWriteError(RuntimeError):
    """A frame that could not be written (the bake turns it into a BakeError)."""


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
        self._queued = deque()  # (frame, final path, future, None for a frame or an extra file's label), in order
        self.written: list[Path] = []  # frames
        self.files: dict[str, list[Path]] = defaultdict(list)  # label: the files besides them (submit_file)
        self.failed = False

    def submit(self, frame: int, path: Path, pixels: np.ndarray, release=None) -> None:
        """Convert and write ``pixels`` to ``path`` on a worker; ``release()`` runs when the pixels are no longer used."""
        self._queued.append((frame, path, self._pool.submit(self._write, path, pixels, release), None))

    def submit_file(self, frame: int, path: Path, write, label: str, release=None) -> None:
        """Run ``write(partial_path)`` on a worker and rename what it wrote to ``path`` (a file besides the frame,
        extras.py: written in frame order with the frames, into ``files``; ``label`` names it in messages);
        ``release()`` runs when it is done, written or not."""
        self._queued.append((frame, path, self._pool.submit(self._write_file, path, write, label, release), label))

    def _write(self, path: Path, pixels: np.ndarray, release) -> None:
        try:
            def convert_and_encode(partial):
                started = time.perf_counter()
                data = self.format.file_pixels(pixels, self._converter and self._converter.result())
                started = self.clock.add("convert", started)
                encode(partial, data, self.format)
                self.clock.add("encode+write", started)

            write_whole(path, convert_and_encode, self.clock)
        finally:
            if release is not None:
                release()

    def _write_file(self, path: Path, write, label: str, release) -> None:
        try:
            started = time.perf_counter()
            write_whole(path, write, self.clock)
            self.clock.add(f"{label}: write", started)
        finally:
            if release is not None:
                release()

    def collect(self, wait: bool = False) -> None:
        """Move finished frames (in frame order) to ``written``; raise FrameWriteError for the first failure,
        after cancelling the frames not yet started and waiting for those being written."""
        while self._queued and (wait or self._queued[0][2].done()):
            frame, path, future, label = self._queued[0]
            error = future.exception()
            if error is not None:
                self.failed = True
                self.close(cancel=True)
                what = f"frame {frame}" if label is None else f"frame {frame}'s {label}"
                # Without its traceback: the worker's frames hold frame buffers (GPU memory) in a cycle.
                raise FrameWriteError(f"Could not write {what} to '{path}': {_reason(error)}") from \
                    error.with_traceback(None)
            self._queued.popleft()
            self._done(path, label)

    def _done(self, path: Path, label: str | None) -> None:
        (self.written if label is None else self.files[label]).append(path)

    def close(self, cancel: bool = False) -> None:
        """Wait for every queued frame (``cancel``: drop those not started yet); keep what was written whole."""
        for _, _, future, _ in self._queued if cancel else ():
            future.cancel()
        self._pool.shutdown(wait=True)
        if self._codec_threads is not None:
            self._codec_threads.restore()
            self._codec_threads = None
        for _, path, future, label in self._queued:
            if not future.cancelled() and future.exception() is None:
                self._done(path, label)
        self._queued.clear()


def write_whole(path: Path, write, clock: StageClock) -> None:
    """``write(partial)`` to a hidden temporary name beside ``path`` (its suffix kept, for writers that go by it),
    then renamed to ``path``: the file appears only whole, and a failure (a full disk) removes what it wrote."""
    partial = path.with_name(f".{path.name}.partial{path.suffix}")
    try:
        write(partial)
        started = time.perf_counter()
        os.replace(partial, path)
        clock.add("rename", started)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def _reason(error: BaseException) -> str:
    return error.strerror if isinstance(error, OSError) and error.strerror else str(error)
