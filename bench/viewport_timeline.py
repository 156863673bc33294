"""Where a viewport draw's time goes on the GPU, inside Blender: GL timestamps around every dispatch and draw.

Blender's Python API has no timer queries; the draw's GL context is current on this thread, so
``glQueryCounter`` reaches it through ctypes (``addon/hosts/gl_native.py``).
Each dispatch and raster draw the host records gets a timestamp before and after (a timestamp is
written once every earlier command has finished), and the CPU time of its call.  Per draw, for the
viewport and events cases of ``bench/blender_gpu.py`` while playing:

* ``ms``: wall time, drained before and after (as ``blender_gpu.py`` measures it);
* ``gpu_ms``: from the first command's start to the last command's end on the GPU;
* ``kernels_ms``: the recorded commands' own time (after minus before, summed);
* ``gaps_ms``: the GPU time between them: commands the host does not record (the depth pre-pass's
  meshes, the final composite) or waiting for the CPU to record and flush;
* ``starved_ms``: the part of ``gaps_ms`` where the next command had not yet been called on the CPU;
* ``per-kernel``: each kernel's summed time, largest first.

Records: suite ``viewport-timeline``, case as ``blender_gpu.py``'s, with those fields and ``top``.

    source /tmp/bgpu/env && .venv/bin/python bench/viewport_timeline.py [--quick] [--draws N] [--out DIR]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import blender_gpu, records  # noqa: E402
from bench.gl_timeline import TimelineHost, timeline  # noqa: E402

TOP = 12  # kernels named in a record


def measure(count: int, width: int, height: int, blend_mode: str, draws: int, preset: str = blender_gpu.PRESET,
            lights=(), render_values: dict | None = None, **effect_values) -> dict:
    """Median figures of ``draws`` draws while playing (after three warm-up draws); ``lights``: stage lights
    added, ``render_values``: the scene's render settings, ``effect_values``: more of the effect's settings,
    or ``spawned`` effects' (as ``blender_gpu.measure_viewport`` takes them)."""
    from addon import viewport

    with tempfile.TemporaryDirectory() as out:
        scene = blender_gpu.effect_scene(preset, count, width, height, (1, draws + 10), Path(out),
                                         blend_mode=blend_mode, **effect_values)
        for name, value in (render_values or {}).items():
            setattr(scene.gpu_particles, name, value)
        blender_gpu.add_stage_lights(lights, scene=scene)
        host = TimelineHost()
        viewport.free()
        viewport._overlay = viewport.Overlay(host)
        view = blender_gpu.OffscreenView(scene, width, height)
        rows = []
        try:
            for frame in (1, 2, 3):
                view.timed_draw(frame)
            for frame in range(4, 4 + draws):
                scene.frame_current = frame
                view.drain()
                cpu_start, gpu_start = host.start()
                ms, cpu_ms = view.timed_draw(frame)
                rows.append({"ms": ms, "cpu_ms": cpu_ms, **timeline(host, cpu_start, gpu_start)})
        finally:
            view.free()
            viewport.free()
            blender_gpu.addon.unregister()
    result = {key: round(statistics.median(r[key] for r in rows), 3)
              for key in ("ms", "cpu_ms", "gpu_ms", "kernels_ms", "gaps_ms", "starved_ms", "commands")}
    names = {name for r in rows for name in r["per_kernel"]}
    kernels = {name: statistics.median(r["per_kernel"].get(name, 0.0) for r in rows) for name in names}
    result["top"] = {name: round(ms, 3) for name, ms in sorted(kernels.items(), key=lambda kv: -kv[1])[:TOP]}
    return result


def main(argv=None) -> int:
    args, draws = blender_gpu.viewport_bench_arguments(__doc__, argv)
    rows = []
    cases = [(*case, {}) for case in blender_gpu.viewport_cases(args.quick)]
    width, height, count = blender_gpu.sized(*blender_gpu.FLIPBOOK_CASE, args.quick)
    cases.append((f"{height}p-{blender_gpu.count_label(count)}-flipbook", width, height, count, "ALPHA",
                  {"render_values": blender_gpu.FLIPBOOK_RENDER, **blender_gpu.FLIPBOOK_VALUES}))
    width, height, count = blender_gpu.sized(*blender_gpu.LIGHTING_CASES[0], args.quick)  # the lighting suite's 1M
    label = f"{height}p-{blender_gpu.count_label(count)}-lit-alpha"
    cases.append((label, width, height, count, "ALPHA",
                  {"lights": (blender_gpu.SUN_LIGHT, blender_gpu.POINT_LIGHT), "lighting": "LIT"}))
    cases.append((f"{label}-smoke", width, height, count, "ALPHA",
                  {"preset": blender_gpu.LIT_PRESET, "lights": (blender_gpu.POINT_LIGHT,), "lighting": "LIT"}))
    width, height, count = blender_gpu.sized(*blender_gpu.FLIPBOOK_CASE, args.quick)
    cases.append((f"{height}p-{blender_gpu.count_label(count)}-flipbook-relief", width, height, count, "ALPHA",
                  {"render_values": blender_gpu.FLIPBOOK_RENDER, "lights": (blender_gpu.SUN_LIGHT, blender_gpu.POINT_LIGHT),
                   "lighting": "LIT", "sprite_relief": blender_gpu.RELIEF, **blender_gpu.FLIPBOOK_VALUES}))
    for case, width, height, count, mode, values in [*cases, *blender_gpu.events_cases(args.quick)]:
        if args.cases and not any(part in case for part in args.cases.split(",")):
            continue
        result = measure(count, width, height, mode, draws, **values)
        rows.append({"case": case, **result, "n": count, "width": width, "height": height})
        top = ", ".join(f"{name} {ms:.3f}" for name, ms in result["top"].items())
        blender_gpu.log(f"{case}: {result['ms']:.3f} ms (cpu {result['cpu_ms']:.3f}, gpu {result['gpu_ms']:.3f}"
                        f" = kernels {result['kernels_ms']:.3f} + gaps {result['gaps_ms']:.3f}, starved "
                        f"{result['starved_ms']:.3f}); {top}")
    records.write("viewport-timeline", blender_gpu.BlenderHost().device, rows, results=args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
