"""Where a frame's time goes inside Blender: Python profiles of the viewport draw and the bake loop,
and what a synchronous readback costs per format (issue 11: find the overhead before removing it).

    source /tmp/bgpu/env && .venv/bin/python bench/profile_blender.py              # the GPU host
    .venv/bin/python bench/profile_blender.py --quick                              # any machine

Prints, per case, the functions with the most time of their own and the most time under them
(``cProfile``), then a table of readback milliseconds and GB/s for the formats a bake could read
(median of ``--repeats`` reads of one texture, the GPU idle before each).  With ``--out DIR`` the
readback rows are also JSON records (suite ``readback``).

``cpu``: what a viewport draw costs the CPU alone, on any machine: ``gpu.compute.dispatch`` is
swapped for a no-op (on llvmpipe a dispatch runs the kernel before it returns, so its time is the
"GPU"'s), then the median ms of a ``draw_view`` playing and redrawing (wall, and the thread's CPU
time: steady on a loaded machine), its dispatches, the draw's CPU microseconds per dispatch, and a
profile of the same draws.  ``dispatch``: the
microseconds ``host.dispatch`` adds to a bare ``gpu.compute.dispatch`` (the same kernel and groups)
for a small kernel and for ``simulate`` (the most constants).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bpy  # noqa: E402, F401  (the bpy module provides gpu)
import gpu  # noqa: E402

import addon  # noqa: E402
from addon import viewport  # noqa: E402
from addon.hosts.blender import BlenderHost  # noqa: E402
from addon.output.bake import BakeJob  # noqa: E402
from bench import records  # noqa: E402
from bench.blender_gpu import OffscreenView, effect_scene, sized  # noqa: E402

READBACK_FORMATS = (  # texture format, read as, channels, texels per pixel
    ("RGBA32F", "FLOAT", 4, 1),
    ("RGBA16F", "FLOAT", 4, 1),
    ("R32UI", "UINT", 1, 2),  # two halves a word: what the EXR path reads
    ("R32UI", "UINT", 1, 1),  # one RGBA8 a word
    ("RGBA8", "UBYTE", 4, 1),
)


def profile(label: str, run, top: int) -> None:
    profiler = cProfile.Profile()
    started = time.perf_counter()
    profiler.enable()
    run()
    profiler.disable()
    print(f"\n=== {label}: {time.perf_counter() - started:.3f} s", flush=True)
    for key in ("tottime", "cumulative"):
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats(key).print_stats(top)
        print("\n".join(line for line in text.getvalue().splitlines() if line.strip())[-6000:], flush=True)


@contextmanager
def viewport_scene(count: int, width: int, height: int, blend_mode: str, draws: int):
    """An offscreen view of the preset's scene, drawn 3 times (compilation, preroll); frames 4 on are free."""
    with tempfile.TemporaryDirectory() as out:
        scene = effect_scene("default", count, width, height, (1, draws + 10), Path(out), blend_mode=blend_mode)
        viewport.free()
        view = OffscreenView(scene, width, height)
        try:
            for frame in (1, 2, 3):
                view.timed_draw(frame)
            yield view
        finally:
            view.free()
            viewport.free()
            addon.unregister()


def profile_viewport(count: int, width: int, height: int, blend_mode: str, draws: int, top: int) -> None:
    with viewport_scene(count, width, height, blend_mode, draws) as view:
        profile(f"viewport {count} {blend_mode} {width}x{height}, {draws} draws playing",
                lambda: [view.timed_draw(frame) for frame in range(4, 4 + draws)], top)


@contextmanager
def dispatches_stubbed():
    """``gpu.compute.dispatch`` as a counting no-op (the host looks it up at each call)."""
    real, calls = gpu.compute.dispatch, []
    gpu.compute.dispatch = lambda *args: calls.append(1)
    try:
        yield calls
    finally:
        gpu.compute.dispatch = real


@contextmanager
def thread_time_of_draws():
    """The calling thread's CPU seconds in each ``viewport.draw_view`` (steady on a loaded machine, where
    wall time is not; Blender's and the driver's own threads left out)."""
    draw, spent = viewport.draw_view, []

    def timed(*args, **kwargs):
        start = time.thread_time()
        draw(*args, **kwargs)
        spent.append(time.thread_time() - start)
    viewport.draw_view = timed
    try:
        yield spent
    finally:
        viewport.draw_view = draw


def cpu_cost(count: int, width: int, height: int, blend_mode: str, draws: int, top: int) -> dict:
    """Median CPU ms of a draw playing and redrawing with every dispatch a no-op (wall time until
    ``draw_view`` returns, and the thread's CPU time), then their profile."""
    with viewport_scene(count, width, height, blend_mode, 2 * draws + 10) as view, dispatches_stubbed() as calls:
        for frame in range(4, 14):  # checkpoints and first draws behind
            view.timed_draw(frame)
        calls.clear()
        with thread_time_of_draws() as playing_thread:
            playing = [view.timed_draw(frame)[1] for frame in range(14, 14 + draws)]
        dispatches = len(calls) / draws
        last = 13 + draws
        with thread_time_of_draws() as redraw_thread:
            redraw = [view.timed_draw(last)[1] for _ in range(draws)]
        profile(f"CPU only: viewport {count} {blend_mode} {width}x{height}, {draws} draws playing",
                lambda: [view.timed_draw(frame) for frame in range(last + 1, last + 1 + draws)], top)
    ms, thread_ms = statistics.median(playing), statistics.median(playing_thread) * 1e3
    row = {"case": f"{height}p-{count}-{blend_mode.lower()}", "cpu_ms": round(ms, 3),
           "thread_ms": round(thread_ms, 3), "redraw_cpu_ms": round(statistics.median(redraw), 3),
           "redraw_thread_ms": round(statistics.median(redraw_thread) * 1e3, 3), "dispatches": dispatches,
           "thread_us_per_dispatch": round(thread_ms * 1e3 / dispatches, 1)}
    print(f"\nCPU per draw, dispatches stubbed: {row}", flush=True)
    return row


def profile_bake(count: int, width: int, height: int, file_format: str, frames: int, top: int) -> None:
    with tempfile.TemporaryDirectory() as out:
        scene = effect_scene("default", count, width, height, (1, frames + 1), Path(out), file_format)
        try:
            job = BakeJob(scene)
            job.step()

            def rest():
                while not job.finished:
                    job.step()
                job.close()

            profile(f"bake {count} {file_format} {width}x{height}, {frames} frames", rest, top)
        finally:
            addon.unregister()


def readback_rows(width: int, height: int, repeats: int) -> list[dict]:
    rows = []
    for texture_format, data_format, channels, texels in READBACK_FORMATS:
        texture = gpu.types.GPUTexture((width * texels, height), format=texture_format)
        framebuffer = gpu.types.GPUFrameBuffer(color_slots=texture)
        buffer = gpu.types.Buffer(data_format, width * texels * height * channels)
        times, fresh = [], []
        with framebuffer.bind():
            for _ in range(repeats):
                framebuffer.read_color(0, 0, 1, 1, channels, 0, data_format)  # the GPU idle
                start = time.perf_counter()
                framebuffer.read_color(0, 0, width * texels, height, channels, 0, data_format, data=buffer)
                times.append(time.perf_counter() - start)
        for _ in range(repeats):
            start = time.perf_counter()
            texture.read()
            fresh.append(time.perf_counter() - start)
        megabytes = width * texels * height * channels * (1 if data_format == "UBYTE" else 4) / 1e6
        label = f"{texture_format}x{texels}"
        ms, fresh_ms = statistics.median(times) * 1e3, statistics.median(fresh) * 1e3
        rows.append({"case": f"{width}x{height}-{label}", "ms": round(ms, 3),
                     "texture_read_ms": round(fresh_ms, 3), "mb": round(megabytes, 2),
                     "gb_s": round(megabytes / ms, 2)})
        print(f"{width}x{height} {label:12s} {data_format:6s} {megabytes:7.1f} MB  read_color {ms:7.2f} ms "
              f"({megabytes / ms:5.2f} GB/s)  texture.read {fresh_ms:7.2f} ms", flush=True)
        del framebuffer, texture
    return rows


def dispatch_overhead(repeats: int) -> None:
    """CPU microseconds (the thread's) ``host.dispatch`` adds to a bare ``gpu.compute.dispatch`` of the same kernel and groups
    (both at one workgroup, so llvmpipe's part is small and the same), and what it costs with the dispatch
    itself a no-op, for a small kernel and the simulate kernel (the most constants)."""
    import numpy as np

    from addon.engine.draw.readback import FRAME_OUT
    from addon.engine.settings.settings import EffectSettings
    from addon.engine.simulate.simulation import SIMULATE, simulate_constants

    host = BlenderHost()
    frame, target = host.texture("frame", 64, 64, "RGBA32F"), host.texture("target", 64, 64, "RGBA32F")
    noise = host.volume("noise", np.zeros((4, 4, 4, 4), np.float32))
    sdf_atlas = host.volume("sdf_atlas", np.zeros((1, 1, 1), np.float32))
    state = {name: host.texture(name, 256, 1, "RGBA32F") for name in ("pos_age", "vel_life", "triangles", "fields")}
    eye = np.identity(4)
    simulate = simulate_constants(EffectSettings(), dt=0.04, step_index=1, time=0.04, emitter_prev=eye, emitter_cur=eye,
                                  origin_in=np.zeros(3), origin_out=np.zeros(3))
    cases = (("frame_out", (FRAME_OUT, (1, 1, 1), {"frame": frame, "target": target}, {"target_size": (64, 64)})),
             ("simulate", (SIMULATE, (1, 1, 1), {**state, "noise": noise, "sdf_atlas": sdf_atlas}, simulate)))

    def us(call, *arguments) -> float:  # the thread's CPU time: steady on a loaded machine
        call(*arguments)
        start = time.thread_time()
        for _ in range(repeats):
            call(*arguments)
        return (time.thread_time() - start) / repeats * 1e6

    def bare_dispatch(shader):
        gpu.compute.dispatch(shader, 1, 1, 1)
        gpu.shader.unbind()

    for name, args in cases:
        bare = us(bare_dispatch, host.compile(args[0]))
        hosted = us(host.dispatch, *args)
        with dispatches_stubbed():
            stubbed = us(host.dispatch, *args)
        print(f"dispatch CPU cost, {name}: host.dispatch {hosted:.1f} us, bare gpu.compute.dispatch {bare:.1f} us "
              f"(host adds {hosted - bare:.1f} us); host.dispatch with a no-op dispatch {stubbed:.1f} us", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, every path")
    parser.add_argument("--frames", type=int, default=12)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--only", default="viewport,cpu,bake,readback,dispatch")
    parser.add_argument("--draws", type=int, default=40, help="draws per case of the cpu part")
    parser.add_argument("--out", type=Path, help="write the readback records here")
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    BlenderHost()  # gpu.init() in the bpy module
    if "dispatch" in only:
        dispatch_overhead(200)
    cases = [(*sized(1920, 1080, count, args.quick), mode) for count, mode in ((4_000_000, "ADD"), (1_000_000, "ALPHA"))]
    if "viewport" in only:
        for width, height, n, mode in cases:
            profile_viewport(n, width, height, mode, args.frames, args.top)
    if "cpu" in only:
        rows = [cpu_cost(n, width, height, mode, args.draws, args.top) for width, height, n, mode in cases]
        print()
        for row in rows:
            print(" | ".join(f"{key} {value}" for key, value in row.items()))
    if "bake" in only:
        for file_format in ("PNG", "OPEN_EXR"):
            width, height, n = sized(1920, 1080, 1_000_000, args.quick)
            profile_bake(n, width, height, file_format, args.frames, args.top)
    if "readback" in only:
        rows = []
        for width, height in ((1920, 1080), (3840, 2160)):
            width, height, _ = sized(width, height, 0, args.quick)
            rows += readback_rows(width, height, args.repeats)
        if args.out:
            records.write("readback", gpu.platform.renderer_get(), rows, results=args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
