"""What limits the bake's EXR throughput (issue 11: 1080p >= 120 frames/s, 4K >= 30 frames/s).

    source /tmp/bgpu/env && .venv/bin/python bench/exr_encode.py --out $OUT      # the GPU host
    .venv/bin/python bench/exr_encode.py --quick                                  # any machine: every path, small

The frames are real: one frame of the preset (``--count`` particles, additive) baked by the product
at 1080p and 4K, read back as the half RGBA it wrote (``--synthetic``: sparse random sparks).
Three suites, JSON records through ``bench/records.py``:

* ``exr-encode``: one frame written over and over by one thread, OpenEXR's pool off, so the thread's
  CPU time is the frame's: ``core_ms`` and bytes per variant (chunking, tiles, the all-zero alpha,
  codecs for reference), the Python-side copies (``ascontiguousarray`` of a flipped view, ``tobytes``),
  and ``gil_free``: how fast a pure-Python thread runs during ``write_image`` against during
  ``hashlib.sha256`` (a call known to release the GIL): near 1 means the GIL is released.
* ``exr-writers``: ``--frames`` frames through K concurrent writers without a GPU (FrameWriter, or
  writer processes fed through shared memory), for K = 1 and all cores; ``fps``,
  ``core_ms`` per frame (every thread and reaped child process), and ``probe_ms``: a frame-sized
  copy on the main thread while the writers run (the readback's CPU part), against ``probe_idle_ms``.
* ``exr-bake``: the product bake (bench/bake_throughput.measure_bake: draw, real readback, writers)
  at 1080p and 4K for each thread variant with all cores and all but one as writers: ``fps``,
  ``core_ms``, the main thread's ``readback ms`` and the other stages.

Writer variants: ``pool`` (OpenEXR's shared pool compresses, as before this bench), ``pool-nice``
(the same, writer threads and the pool's threads niced: the product's default), ``own`` (each writer compresses its own
frame: exr_threads -1), ``own-nice``, ``procs-nice`` (writer processes,
fed through shared memory, niced).
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from multiprocessing import shared_memory
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import records  # noqa: E402
from bake_throughput import cpu_seconds, effect_scene, measure_bake  # noqa: E402

from addon.output.display import image_modules  # noqa: E402
from addon.output.formats.exr import ZIP_LEVEL, ExrFormat, ExrThreads  # noqa: E402
from addon.output.frame_writer import WRITER_NICE, FrameWriter  # noqa: E402

EXR = ExrFormat(compression=f"zip:{ZIP_LEVEL}")  # the product's, for the scene's default codec
SIZES = {"1080p": (1920, 1080), "2160p": (3840, 2160)}
VARIANTS = {  # name: FrameWriter options, or processes
    "pool": dict(nice=0, exr_pool=True),
    "pool-nice": dict(nice=WRITER_NICE, exr_pool=True),
    "own": dict(nice=0, exr_pool=False),
    "own-nice": dict(nice=WRITER_NICE, exr_pool=False),
    "procs-nice": dict(nice=WRITER_NICE, processes=True),
}


def baked_frame(width: int, height: int, count: int, preset: str, frame: int) -> np.ndarray:
    """Frame ``frame`` of the preset as the product bakes it to EXR: (height, width, 4) float16."""
    import bpy

    import addon
    from addon.output.bake import BakeJob

    out_dir = Path(tempfile.mkdtemp(prefix="gpu_particles_exr_frame_"))
    try:
        scene = effect_scene(preset, count, width, height, (1, frame), out_dir, "OPEN_EXR")
        job = BakeJob(scene, frames=(frame, frame))
        while not job.finished:
            job.step()
        job.close()
        pixels = read_exr(job.written[0])
        addon.unregister()
        bpy.ops.wm.read_factory_settings(use_empty=True)
        return pixels
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


def synthetic_frame(width: int, height: int) -> np.ndarray:
    """Sparse sparks on black, alpha 0 (as the additive layer's): 6% of pixels lit."""
    rng = np.random.default_rng(1)
    frame = np.zeros((height, width, 4), np.float16)
    lit = rng.random((height, width)) < 0.06
    frame[lit, :3] = rng.exponential(0.8, (lit.sum(), 3))
    return frame


def read_exr(path) -> np.ndarray:
    oiio, _ = image_modules()
    image = oiio.ImageInput.open(str(path))
    try:
        return image.read_image("half")
    finally:
        image.close()


def frame_summary(pixels: np.ndarray) -> dict:
    lit = np.any(pixels[..., :3] != 0, axis=-1)
    return {"lit_pixels": round(float(lit.mean()), 4), "alpha_pixels": round(float((pixels[..., 3] != 0).mean()), 4),
            "alpha_max": float(pixels[..., 3].max())}


def write_exr(path: Path, pixels: np.ndarray, compression: str = EXR.compression, chunk: int = 0,
              tile: int | tuple[int, int] = 0) -> None:
    """One scanline EXR, or in ``chunk`` scanlines a call, or in ``tile`` (square, or (width, height)) tiles."""
    oiio, _ = image_modules()
    height, width, channels = pixels.shape
    spec = oiio.ImageSpec(width, height, channels, "half")
    spec.attribute("compression", compression)
    if tile:
        spec.tile_width, spec.tile_height = tile if isinstance(tile, tuple) else (tile, tile)
    output = oiio.ImageOutput.create(str(path))
    assert output.open(str(path), spec), output.geterror()
    if chunk:
        for y in range(0, height, chunk):
            assert output.write_scanlines(y, min(height, y + chunk), 0, pixels[y:y + chunk])
    else:
        assert output.write_image(pixels)
    assert output.close()


def thread_ms(run, repeats: int) -> float:
    """Median CPU milliseconds of the calling thread per ``run()`` (after one warm-up)."""
    run()
    times = []
    for _ in range(repeats):
        started = time.thread_time()
        run()
        times.append((time.thread_time() - started) * 1e3)
    return statistics.median(times)


def gil_free(pixels: np.ndarray, path: Path, repeats: int) -> float:
    """A Python thread's counting speed during ``write_image`` over its speed during a sha256 of as many bytes
    (which releases the GIL): about 1 when ``write_image`` releases the GIL, about 0 when it holds it."""
    counter = [0, True]

    def spin():
        while counter[1]:
            counter[0] += 1

    def rate(run):
        started, before = time.perf_counter(), counter[0]
        run()
        return (counter[0] - before) / (time.perf_counter() - started)

    data = bytes(max(pixels.nbytes * 8, 1 << 26))
    spinner = threading.Thread(target=spin)
    spinner.start()
    time.sleep(0.05)
    try:
        ratios = [(rate(lambda: write_exr(path, pixels)), rate(lambda: hashlib.sha256(data).digest()))
                  for _ in range(repeats)]
    finally:
        counter[1] = False
        spinner.join()
    return round(statistics.median(during / control for during, control in ratios if control), 2)


def encode_costs(label: str, pixels: np.ndarray, folder: Path, repeats: int) -> list[dict]:
    """Suite exr-encode: one thread's CPU ms and the file's bytes per variant, OpenEXR's pool off."""
    path = folder / "frame.exr"
    opaque, clear, brightest = pixels.copy(), pixels.copy(), pixels.copy()
    opaque[..., 3], clear[..., 3] = 1.0, 0.0
    brightest[..., 3] = np.clip(pixels[..., :3].max(axis=-1), 0.0, 1.0)  # the bake's alpha until additive light got 0
    product = EXR.compression  # the product's default: ZIP at ZIP_LEVEL
    variants = {
        f"{product}-scanline (product)": lambda: write_exr(path, pixels),
        f"{product}-write_scanlines-16": lambda: write_exr(path, pixels, chunk=16),
        f"{product}-write_scanlines-256": lambda: write_exr(path, pixels, chunk=256),
        f"{product}-tiled-64": lambda: write_exr(path, pixels, tile=64),
        f"{product}-tiled-256": lambda: write_exr(path, pixels, tile=256),
        f"{product}-tiled-width-x64": lambda: write_exr(path, pixels, tile=(pixels.shape[1], 64)),
        f"{product}-alpha-1": lambda: write_exr(path, opaque),
        f"{product}-alpha-0": lambda: write_exr(path, clear),
        f"{product}-alpha-brightest-channel (before)": lambda: write_exr(path, brightest),
        f"{product}-no-alpha (reference)": lambda: write_exr(path, np.ascontiguousarray(pixels[..., :3])),
        **{f"zip{level} (level {level})": lambda level=level: write_exr(path, pixels, f"zip:{level}")
           for level in range(1, 10)},
        "zips1 (reference)": lambda: write_exr(path, pixels, "zips:1"),
        "zips (reference)": lambda: write_exr(path, pixels, "zips"),
        "rle (reference)": lambda: write_exr(path, pixels, "rle"),
        "none (reference)": lambda: write_exr(path, pixels, "none"),
    }
    pool = ExrThreads(-1)
    try:
        rows = []
        for name, run in variants.items():
            rows.append({"case": f"{label}-{name}", "core_ms": round(thread_ms(run, repeats), 1),
                         "bytes": path.stat().st_size})
            print(rows[-1], flush=True)
        words = np.ascontiguousarray(pixels).view(np.uint32)  # as read back: two halves a word (readback.py)
        view = words.view(np.float16).reshape(pixels.shape)
        rows.append({"case": f"{label}-file_pixels (product, Python side)",
                     "core_ms": round(thread_ms(lambda: EXR.file_pixels(view, None), repeats), 3),
                     "copies": int(not np.shares_memory(EXR.file_pixels(view, None), words))})
        flipped = pixels[::-1]
        rows.append({"case": f"{label}-ascontiguousarray-flipped",
                     "core_ms": round(thread_ms(lambda: np.ascontiguousarray(flipped), repeats), 1)})
        rows.append({"case": f"{label}-tobytes", "core_ms": round(thread_ms(pixels.tobytes, repeats), 1)})
        rows.append({"case": f"{label}-gil_free", "gil_free": gil_free(pixels, path, max(3, repeats // 2))})
    finally:
        pool.restore()
    return rows


class ProcessWriters:
    """Writer processes fed through shared memory, with FrameWriter's ``submit``/``collect``/``close``: a thread a
    process copies the frame into that process's block (numpy releases the GIL) and waits for its reply."""

    def __init__(self, frame_format: ExrFormat, workers: int, nice: int, shape: tuple[int, ...]):
        from concurrent.futures import ThreadPoolExecutor

        self.workers, self.format = workers, frame_format
        context = multiprocessing.get_context("spawn")  # never fork a process that holds a GPU context
        nbytes = int(np.prod(shape)) * 2
        self._blocks = [shared_memory.SharedMemory(create=True, size=nbytes) for _ in range(workers)]
        self._pipes, self._procs = [], []
        oiio, _ = image_modules()
        site = str(Path(oiio.__file__).resolve().parent.parent)
        for block in self._blocks:
            parent, child = context.Pipe()
            process = context.Process(target=_process_writer, args=(child, block.name, shape, frame_format, nice,
                                                                     site, str(ROOT)), daemon=True)
            process.start()
            self._pipes.append(parent)
            self._procs.append(process)
        for pipe in self._pipes:
            pipe.recv()  # started: what follows is writing
        self._free = list(range(workers))
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="exr_process_feeder")
        self._futures = []
        self.written = []
        self.child_cpu = 0.0  # CPU seconds the processes spent writing (their start-up is not the frames')

    def submit(self, frame: int, path: Path, pixels: np.ndarray, release=None) -> None:
        self._futures.append((path, self._pool.submit(self._write, path, pixels, release)))

    def _write(self, path, pixels, release):
        with self._lock:
            slot = self._free.pop()
        try:
            view = np.ndarray(pixels.shape, np.float16, buffer=self._blocks[slot].buf)
            np.copyto(view, pixels)
            del view
            if release is not None:
                release()
            self._pipes[slot].send(str(path))
            error, cpu = self._pipes[slot].recv()
            self.child_cpu += cpu
            if error:
                raise OSError(error)
        finally:
            with self._lock:
                self._free.append(slot)

    def collect(self, wait: bool = False) -> None:
        for path, future in self._futures:
            future.result()
            self.written.append(path)
        self._futures.clear()

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        for pipe, process in zip(self._pipes, self._procs):
            pipe.send(None)
            process.join()
        for block in self._blocks:
            block.close()
            block.unlink()


def _process_writer(pipe, block_name, shape, frame_format, nice, site, root):
    """A writer process: OpenEXR's pool off, niced; writes the shared block to each path it is sent
    (temporary name, then rename, as FrameWriter does)."""
    sys.path[:0] = [root, site]
    from addon.output.formats.base import lower_priority
    from addon.output.formats.exr import ExrThreads
    from addon.output.frame_writer import encode

    lower_priority(nice)
    ExrThreads(-1)
    block = shared_memory.SharedMemory(name=block_name)
    pixels = np.ndarray(shape, np.float16, buffer=block.buf)
    pipe.send("ready")
    while (name := pipe.recv()) is not None:
        path = Path(name)
        partial = path.with_name(f".{path.name}.partial{path.suffix}")
        started = time.process_time()
        try:
            encode(partial, pixels, frame_format)
            os.replace(partial, path)
            pipe.send(("", time.process_time() - started))
        except OSError as error:
            partial.unlink(missing_ok=True)
            pipe.send((str(error), time.process_time() - started))
    del pixels
    block.close()


def probe_ms(pixels: np.ndarray, target: np.ndarray) -> float:
    started = time.perf_counter()
    np.copyto(target, pixels)
    return (time.perf_counter() - started) * 1e3


def concurrent_writers(label: str, pixels: np.ndarray, folder: Path, frames: int, workers: int, variant: str) -> dict:
    """Suite exr-writers: ``frames`` copies of the frame through ``workers`` writers of ``variant``, the main thread
    copying a frame (the probe) before each submit, frames in flight bounded as in the bake (workers + 2)."""
    options = dict(VARIANTS[variant])
    processes = options.pop("processes", False)
    target = np.empty_like(pixels)
    idle = statistics.median(probe_ms(pixels, target) for _ in range(5))
    free = threading.Semaphore(workers + 2)
    writer = (ProcessWriters(EXR, workers, options["nice"], pixels.shape) if processes
              else FrameWriter(EXR, workers, **options))
    started, cpu = time.perf_counter(), cpu_seconds()
    probes = []
    for n in range(frames):
        free.acquire()
        probes.append(probe_ms(pixels, target))
        writer.submit(n, folder / f"f_{n:04d}.exr", pixels, release=free.release)
        if not processes:
            writer.collect()
    writer.collect(wait=True)
    seconds, cpu = time.perf_counter() - started, cpu_seconds() - cpu + getattr(writer, "child_cpu", 0.0)
    writer.close()
    assert len(list(folder.glob("f_*.exr"))) == frames
    np.testing.assert_array_equal(read_exr(folder / f"f_{frames - 1:04d}.exr"), pixels)
    for path in folder.glob("f_*.exr"):
        path.unlink()
    return {"case": f"{label}-{variant}-{workers}", "variant": variant, "workers": workers,
            "fps": round(frames / seconds, 2), "core_ms": round(cpu / frames * 1e3, 1),
            "probe_ms": round(statistics.median(probes), 2), "probe_idle_ms": round(idle, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suites", default="encode,writers,bake", help="any of encode, writers, bake")
    parser.add_argument("--sizes", default="1080p,2160p")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--frames", type=int, default=48, help="frames per writers/bake measurement")
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--preset", default="default")
    parser.add_argument("--frame", type=int, default=24, help="which frame of the preset to encode")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--synthetic", action="store_true", help="random sparks instead of a baked frame")
    parser.add_argument("--quick", action="store_true", help="small sizes and counts: checks every path")
    parser.add_argument("--out", type=Path, help="folder for the JSON records (default bench/results/)")
    args = parser.parse_args()
    suites, variants = args.suites.split(","), args.variants.split(",")
    from addon.hosts.blender import BlenderHost

    device = BlenderHost().device
    cores = os.process_cpu_count() or 1
    sizes = {name: SIZES[name] for name in args.sizes.split(",")}
    if args.quick:
        sizes = {f"{name}-quick": (w // 8, h // 8) for name, (w, h) in sizes.items()}
        args.count, args.frames, args.repeats, args.frame = 10_000, 8, 3, 4
    folder = Path(tempfile.mkdtemp(prefix="gpu_particles_exr_bench_"))
    try:
        for label, (width, height) in sizes.items():
            pixels = (synthetic_frame(width, height) if args.synthetic
                      else baked_frame(width, height, args.count, args.preset, args.frame))
            label = f"{label}-{'synthetic' if args.synthetic else f'{args.count // 1000}K-frame{args.frame}'}"
            print(label, frame_summary(pixels), flush=True)
            if "encode" in suites:
                rows = encode_costs(label, pixels, folder, args.repeats)
                records.write("exr-encode", device, [{**row, **frame_summary(pixels)} for row in rows], args.out)
            if "writers" in suites:
                rows = []
                for workers in sorted({1, cores}):
                    for variant in variants:
                        rows.append(concurrent_writers(label, pixels, folder, args.frames, workers, variant))
                        print(rows[-1], flush=True)
                records.write("exr-writers", device, rows, args.out)
        if "bake" in suites:
            rows = []
            for label, (width, height) in sizes.items():
                for variant, workers in [(v, n) for v in variants if "processes" not in VARIANTS[v]
                                         for n in sorted({cores, max(1, cores - 1)}, reverse=True)]:
                    result = measure_bake(args.preset, args.count, width, height, "OPEN_EXR", args.frames,
                                          workers=workers, **VARIANTS[variant])
                    result.pop("device")
                    rows.append({"case": f"exr-{label}-{args.count // 1000}K-add-{variant}-{workers}",
                                 "variant": variant, **result})
                    print(rows[-1], flush=True)
            records.write("exr-bake", device, rows, args.out)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
