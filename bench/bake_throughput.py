"""Suite ``bake``: finished frames per second of the product's bake (files on disk), stage by stage.

The bake runs as ``make bake`` runs it (the command line's scene, the preset's
effect added by the operator, :class:`addon.output.bake.BakeJob` stepping through the
frames, the same writer threads); the first frame (preroll, shader compiles)
is a warm-up timed apart from the ``frames`` after it, which ``fps`` measures.

    .venv/bin/python bench/bake_throughput.py                  # the four cases of issue 11, 48 frames each (+1 warm-up)
    .venv/bin/python bench/bake_throughput.py --case png-1080p-1M-add --frames 8 --count 200000
    .venv/bin/python bench/bake_throughput.py --scaling        # writer threads 1..cores on one frame (GIL check)
    .venv/bin/python bench/bake_throughput.py --readback sync,pixel-pack   # suite bake-readback: both reads, in turn

Stages (ms per frame): main thread ``draw`` (simulate, composite, copy to a
readback target), ``readback``, ``stats`` (the per-frame overflow read, which
waits for the GPU), ``wait for a writer`` (all buffers in flight); worker
threads, summed over threads: ``convert`` (BW PNG: the view transform; RGB(A)
PNG arrives converted by the GPU's ``frame_display`` in ``draw``: at most a
copy), ``encode+write`` (OpenImageIO), ``rename``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import records  # noqa: E402

CASES = {
    "png-1080p-1M-add": dict(width=1920, height=1080, file_format="PNG"),
    "exr-1080p-1M-add": dict(width=1920, height=1080, file_format="OPEN_EXR"),
    "exr-2160p-1M-add": dict(width=3840, height=2160, file_format="OPEN_EXR"),
    "exr-1080p-1M-alpha": dict(width=1920, height=1080, file_format="OPEN_EXR", blend_mode="ALPHA"),
}


def effect_scene(preset: str, count: int, width: int, height: int, frames: tuple[int, int], out_dir: Path,
                 file_format: str = "PNG", blend_mode: str | None = None, spawned: dict | None = None,
                 **effect_values):
    """The preset's stage and effect with ``count`` particles, as ``make bake`` builds it (add-on registered);
    ``effect_values`` set more of the effect's settings (``lighting="EMISSION"``: the same effect unlit),
    ``spawned`` ({label: values}) those of the preset's spawned effects (sub-emitters)."""
    import addon
    from addon.cli import add_preset_effect, build_scene
    from addon.engine.settings.presets import load_preset

    loaded = load_preset(preset)
    scene, emitter = build_scene(loaded, frames, (width, height), out_dir)
    scene.render.image_settings.file_format = file_format
    addon.register()
    scene.gpu_particles_output.bake_path = scene.render.filepath  # the bake's own output setting
    add_preset_effect(scene, preset, loaded)
    effect = emitter.gpu_particles.active_effect
    effect.count = count
    if blend_mode is not None:
        effect.blend_mode = blend_mode
    for name, value in effect_values.items():
        setattr(effect, name, value)
    for label, values in (spawned or {}).items():
        for name, value in values.items():
            setattr(emitter.gpu_particles.effects[label], name, value)
    return scene


def measure_bake(preset: str, count: int, width: int, height: int, file_format: str, frames: int,
                 blend_mode: str | None = None, workers: int | None = None, **writer_options) -> dict:
    """Bake one warm-up frame then ``frames`` frames of ``preset`` with ``count`` particles: fps over those
    ``frames`` (files on disk), the warm-up's seconds, ms per frame of each stage, and the device."""
    import bpy

    import addon
    from addon.output.bake import BakeJob

    out_dir = Path(tempfile.mkdtemp(prefix="gpu_particles_bench_"))
    try:
        scene = effect_scene(preset, count, width, height, (1, frames + 1), out_dir, file_format, blend_mode)
        started = time.perf_counter()
        job = BakeJob(scene, workers=workers, **writer_options)
        job.step()
        job.clock.reset()  # stages in the steady state: the first frame's preroll and compiles are first_frame_s
        steady, cpu, main = time.perf_counter(), cpu_seconds(), time.thread_time()
        while not job.finished:
            job.step()
        ended, cpu = time.perf_counter(), cpu_seconds() - cpu  # the last step waited for every file
        main = time.thread_time() - main
        job.close()
        assert len(job.written) == frames + 1, f"{len(job.written)} of {frames + 1} frames written"
        stages = {f"{stage} ms": round(seconds / frames * 1e3, 2) for stage, seconds in job.clock.seconds.items()}
        result = {
            "fps": round(frames / (ended - steady), 2),
            "frames": frames,
            "core_ms": round(cpu / frames * 1e3, 1),  # CPU time of every thread of the process, a frame
            "main_cpu_ms": round(main / frames * 1e3, 2),  # of which the main thread's (drawing, reading back)
            "first_frame_s": round(steady - started, 3),
            "workers": job.writer.workers,
            "readback": "pixel-pack" if job.renderer.host.reads_without_waiting else "sync",  # what ran
            "device": job.renderer.host.device,
            **stages,
        }
        addon.unregister()
        bpy.ops.wm.read_factory_settings(use_empty=True)
        return result
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


def cpu_seconds() -> float:
    """User + system CPU seconds of every thread of this process."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def writer_scaling(file_format: str, frames: int, width: int = 1920, height: int = 1080) -> list[dict]:
    """Frames/s of the writer threads alone (convert + encode + write + rename) with 1, 2, 4 ... workers:
    the calls they make must release the GIL for this to grow with the thread count."""
    import bpy

    from addon.output.display import display_pixels, display_processor, quantize
    from addon.output.formats import frame_format
    from addon.output.frame_writer import FrameWriter

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.image_settings.file_format = file_format
    rng = np.random.default_rng(1)
    frame = np.zeros((height, width, 4), np.float32)
    lit = rng.random((height, width)) < 0.06  # a sparse spark frame, like the default preset's
    frame[lit, :3] = rng.exponential(0.8, (lit.sum(), 3))
    frame[lit, 3] = 1.0
    output = frame_format(scene)
    pixels = frame.astype(np.float16) if file_format.startswith("OPEN_EXR") else frame
    if output.gpu_display:  # what the GPU's frame_display hands the workers: the file's bytes, top row first
        pixels = quantize(display_pixels(frame, display_processor(output.gpu_display), False), 3,
                          np.dtype(output.depth))
    rows = []
    counts = sorted({1, 2, 4, 8, 16, os.process_cpu_count() or 1})
    for workers in [n for n in counts if n <= (os.process_cpu_count() or 1)]:
        out_dir = Path(tempfile.mkdtemp(prefix="gpu_particles_scaling_"))
        writer = FrameWriter(output, workers)
        started = time.perf_counter()
        for n in range(frames):
            writer.submit(n, out_dir / f"f_{n:04d}{output.extension}", pixels.copy())
        writer.collect(wait=True)
        seconds = time.perf_counter() - started
        writer.close()
        shutil.rmtree(out_dir, ignore_errors=True)
        rows.append({"case": f"{file_format.lower()}-{height}p-writer-{workers}", "workers": workers,
                     "fps": round(frames / seconds, 2)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="default: all four")
    parser.add_argument("--frames", type=int, default=48)
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--preset", default="default")
    parser.add_argument("--workers", type=int, help="writer threads (default: the machine's cores)")
    parser.add_argument("--scaling", action="store_true", help="writer threads alone, 1..cores, PNG and EXR")
    parser.add_argument("--readback", help="suite bake-readback: each case with these reads, comma-separated, "
                        "of sync (Blender's read_color) and pixel-pack (hosts/gl_readback.py)")
    parser.add_argument("--out", type=Path, help="results folder (default bench/results/)")
    args = parser.parse_args()
    from addon.hosts.blender import BlenderHost

    device = BlenderHost().device  # gpu.platform.renderer_get()
    if args.scaling:
        rows = writer_scaling("PNG", args.frames) + writer_scaling("OPEN_EXR", args.frames)
        records.write("bake-writer", device, rows, results=args.out)
        return
    rows = []
    readbacks = args.readback.split(",") if args.readback else [None]
    for case in args.case or list(CASES):
        for readback in readbacks:
            with readback_mode(readback):
                result = measure_bake(args.preset, args.count, frames=args.frames, workers=args.workers,
                                      **CASES[case])
            result.pop("device")
            rows.append({"case": f"{case}-{readback}" if readback else case, **result})
            print(rows[-1], flush=True)
    records.write("bake-readback" if args.readback else "bake", device, rows, results=args.out)


@contextmanager
def readback_mode(mode: str | None):
    """The bake's readback: ``sync`` (Blender's read_color), ``pixel-pack`` (the product's default where
    Blender draws with OpenGL on a hardware GPU; a record's ``readback`` says which ran) or None (as
    configured)."""
    from addon.hosts.gl_readback import ENVIRONMENT

    if mode is None:
        yield
        return
    if mode not in ("sync", "pixel-pack"):
        raise SystemExit(f"--readback: {mode!r} is neither sync nor pixel-pack")
    before = os.environ.pop(ENVIRONMENT, None)
    if mode == "sync":
        os.environ[ENVIRONMENT] = "sync"
    try:
        yield
    finally:
        os.environ.pop(ENVIRONMENT, None)
        if before is not None:
            os.environ[ENVIRONMENT] = before


if __name__ == "__main__":
    main()
