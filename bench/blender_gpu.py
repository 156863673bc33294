"""One benchmark inside Blender on the GPU: the test suite, bakes, viewport draws, and the
end-to-end shot against Blender's own way, in one run (issue 11).

    source /tmp/bgpu/env && .venv/bin/python bench/blender_gpu.py      # the GPU host (or: make bench-gpu)
    .venv/bin/python bench/blender_gpu.py --quick                       # any machine: every path, tiny sizes

Suites, one JSON file each in ``--out`` (default bench/results/) through ``bench/records.py``:

* ``blender-tests``: ``python -m pytest tests -q`` in a child process: passed, failed, errors and the
  failing tests' names (``--skip-tests`` leaves it out; ``--quick`` does).
* ``bake``: frames per second of the product bake (wall clock, steady state, files on disk), by
  ``bench/bake_throughput.measure_bake``; ``exr-1080p-1M-lit``: the lit smoke preset (its sun, self-shadowed).
* ``viewport``: ms per ``viewport.draw_view`` into an offscreen target, the GPU drained before and
  after each timed draw by a 1-texel readback of that target (Blender 5.2's Python API has no
  finish or fence; a synchronous readback of a texel the draw wrote returns only once every
  command it depends on has run).  ``ms``: playing (one frame forward a draw), median
  (``max_ms``: the slowest, e.g. a frame that copies a timeline checkpoint on the GPU); ``cpu_ms``: until
  ``draw_view`` returns, the GPU not waited for (what the draw costs the CPU: Python, Blender's calls, the
  driver; when it is near ``ms`` the CPU is the bound); ``redraw_ms``, ``redraw_cpu_ms``: the same frame drawn again; ``stats_ms``: playing with the Stats panel shown
  (the draw waits for the GPU per stage; ``stage <name> ms``: its stage times, median); per draw while playing: ``dispatches``, ``draws``,
  ``waits`` (readbacks + finishes: 0 with the Stats panel hidden and Manual Emax),
  ``uploads``, ``clears``, counted by ``bench/counting.CountingHost``.
  ``1080p-1M-flipbook``: 1M alpha sprites of the shipped 8x8 smoke flipbook (``FLIPBOOK_VALUES``), soft particles on
  (``FLIPBOOK_RENDER``), ``peer_ms`` the same draw with round sprites, ``texture_extra_ms`` the difference.
* ``lighting``: the viewport draw (as ``viewport`` measures it) of the smoke preset's alpha sprites lit by its sun
  and a point light, both casting particle shadows: ``ms`` lit, ``peer_ms`` the same effect unlit (Emission) in the
  same run, ``lit_extra_ms`` the difference; ``1080p-1M-flipbook-relief``: the viewport suite's flipbook lit by the
  same lights with Relief 0.8 (``peer_ms``: lit without relief, ``relief_extra_ms`` the difference).
* ``events``: issue 31's viewport draws (as ``viewport`` measures them): ``1080p-1M-trails32``: the comet
  preset with 1M particles, each with a 32-point trail, additive, drawn by the compute splat (goal: ``ms`` <= 4
  on an H100/H200; ``peer_ms``: the same as rasterized ribbons);
  ``1080p-fireworks-4M``: the fireworks preset's sub-emitters, 100K rockets bursting into 4M spark slots
  (and their crackle), the family's step included (goal: ``ms`` <= 3 on an H100; ``peer_ms``: the same with the
  sparks' quads rasterized, bench/quad_peer.py, as before quad_tiles.py); ``1080p-comet-as-shipped`` and
  ``1080p-fireworks-as-shipped``: the two presets at their own counts (6000 particles; 16 rockets), with the
  same peers: what an artist's frame of them costs, beside the cases' 167x and 6250x.
* ``interactions``: issue 46's particles acting on each other (bench/interactions.py, its table of cases): ``ms``
  per whole simulation step, the neighbour grid included, and where it goes (``grid_ms``, ``list_ms``,
  ``simulate_ms``, ``iteration_ms``, ``settle_ms``); ``grid-4M`` (goal: <= 1 ms on an H200), ``granular-1M``
  (goal: <= 5 ms).
* ``final-render`` (``--suites final-render``): bench/final_render.py's cases, Render Animation of 1080p frames
  with 1M particles composited (``ms``) against the same render without them (``peer_ms``):
  ``workbench-1080p-1M`` and ``shadows-1080p-1M`` (Lit under a sun, Shadows on Scene on a ground plane).
* ``end-to-end``: ms per finished PNG frame on disk of the product bake against Blender's own way
  (``bench/blender_way.py``: its particle system, EEVEE at one sample, instanced icospheres),
  the same count, emitter, lifetime, gravity and resolution; ours over a shot of ``--bake-frames``
  frames (the writer threads' last frames inside the time), Blender's way over ``--peer-frames``
  (each of its frames costs the same seconds); start-up excluded on both sides (scene set-up,
  shader compilation, preroll and one warm-up frame are not timed).
* ``export`` (not in the default list: ``--suites export``): files written beside the frames, ``bench/export.py``
  (``points-1M``: point-cache frames of 1M particles a second, and where the time goes; ``vdb-smoke``,
  bench/vdb_export.py: VDB frames of the smoke preset at a 256-voxel longest side written, ``fps`` (goal >= 20),
  where the time goes (``grid_ms``, ``readback_ms``, ``encode_ms``, ``disk_ms``), against Geometry Nodes' Points to
  Volume and Bake node on the same points, ``peer_ms_per_frame``, goal ``ratio`` >= 20).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bpy  # noqa: E402, F401  (the bpy module provides gpu and mathutils)
import gpu  # noqa: E402
from mathutils import Matrix  # noqa: E402

import addon  # noqa: E402
from addon import viewport  # noqa: E402
from addon.engine.settings.presets import load_preset  # noqa: E402
from addon.hosts.blender import BlenderHost  # noqa: E402
from addon.scene.renderer import camera_of  # noqa: E402
from addon.scene.stage_lights import add_stage_lights  # noqa: E402
from bench import interactions, records  # noqa: E402
from bench.bake_throughput import effect_scene, measure_bake  # noqa: E402
from bench.blender_way import blender_way_ms  # noqa: E402
from bench.counting import CountingHost  # noqa: E402
from bench.export import export_suite  # noqa: E402
from bench.quad_peer import rasterized_quads  # noqa: E402

PRESET = "default"
BAKE_CASES = (("PNG", 1920, 1080, 1_000_000, "ADD"), ("OPEN_EXR", 1920, 1080, 1_000_000, "ADD"),
              ("OPEN_EXR", 3840, 2160, 1_000_000, "ADD"), ("OPEN_EXR", 1920, 1080, 1_000_000, "ALPHA"))
VIEWPORT_CASES = ((1920, 1080, 4_000_000, "ADD"), (1920, 1080, 1_000_000, "ALPHA"), (1920, 1080, 4_000_000, "ALPHA"))
# The viewport's textured alpha sprites (issue 32): 1M sprites of the shipped 8x8 smoke flipbook, turned and spinning,
# frames blended, soft particles on (FLIPBOOK_RENDER); timed against the same draw with round sprites (``peer_ms``).
FLIPBOOK_CASE = (1920, 1080, 1_000_000)
FLIPBOOK_VALUES = {"particle_type": "SPRITE", "sprite_image": "textures/smoke_puff_8x8.png", "flipbook_columns": 8,
                   "flipbook_rows": 8, "flipbook_blend": "FRAMES", "rotation_random": 3.14159, "spin": 1.0}
FLIPBOOK_RENDER = {"soft_distance": 0.5}
RELIEF = 0.8  # the lighting suite's flipbook with relief (issue 32): the Smoke Puffs preset's
END_TO_END = (1920, 1080, 1_000_000)
LIT_PRESET = "smoke"  # alpha sprites, lit by a sun, self-shadowed
LIT_BAKE_CASE = ("OPEN_EXR", 1920, 1080, 1_000_000)
LIGHTING_CASES = ((1920, 1080, 1_000_000), (1920, 1080, 4_000_000))
POINT_LIGHT = {"type": "POINT", "name": "Bench Point", "power": 400.0, "color": (1.0, 0.6, 0.3),
               "location": (-2.0, -1.5, 2.0), "shadow": True}  # beside the smoke preset's sun
SUN_LIGHT = {"type": "SUN", "name": "Bench Sun", "power": 4.0, "color": (1.0, 0.95, 0.9),
             "location": (-6.0, -4.0, 8.0), "target": (0.0, 0.0, 0.0), "shadow": True}
TRAILS_PRESET = "comet"
TRAILS_CASE = (1920, 1080, 1_000_000, 32)  # width, height, particles, trail points (issue 31)
FIREWORKS_PRESET = "fireworks"
FIREWORKS_CASE = (1920, 1080, 100_000, 4_000_000)  # width, height, rockets, sparks (issue 31)
# Every rocket slot relaunched at once when it bursts, 40 sparks a burst, and 3 s simulated before the first
# draw: the sparks near their 4M slots from the first timed frame (the crackle keeps the preset's ring).
FIREWORKS_ROCKETS = {"rate": 0.0, "preroll": 3.0}
FIREWORKS_SPARKS = {"spawn_count": 40}
QUICK_SCALE, QUICK_COUNT_SCALE = 30, 100  # --quick: 1920x1080 -> 64x36, 1M -> 10K particles


def sized(width: int, height: int, count: int, quick: bool) -> tuple[int, int, int]:
    return (width // QUICK_SCALE, height // QUICK_SCALE, count // QUICK_COUNT_SCALE) if quick else (width, height, count)


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def count_label(count: int) -> str:
    return f"{count // 1_000_000}M" if count % 1_000_000 == 0 else f"{count // 1000}K"


def parse_pytest(output: str) -> dict:
    """passed, failed, skipped, errors from pytest's summary line; the failing tests' ids from its -rfE lines."""
    summary = next((line for line in reversed(output.splitlines()) if re.search(r"\d+ (passed|failed|error)", line)),
                   "")
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|skipped|errors?)\b", summary)}
    return {"passed": counts.get("passed", 0), "failed": counts.get("failed", 0), "skipped": counts.get("skipped", 0),
            "errors": counts.get("errors", 0) + counts.get("error", 0),
            "failures": re.findall(r"^(?:FAILED|ERROR) (\S+)", output, re.MULTILINE), "summary": summary.strip(" =")}


def suite_files(pattern: str = "test_*.py") -> list[str]:
    """The test files matching ``pattern`` in every folder under ``tests/`` (they mirror the house), sorted."""
    return sorted(path.relative_to(ROOT).as_posix() for path in (ROOT / "tests").rglob(pattern))


def run_tests(processes: int = 1, log_path: Path | None = None, pattern: str = "test_*.py") -> dict:
    """The suite in child processes, as ``.venv/bin/python -m pytest tests -q`` runs it: with ``processes`` > 1 the
    test files are dealt round robin to that many pytest processes side by side (a GPU machine's cores and GPU
    are mostly idle under one), and their counts summed; ``log_path``: their output, one after another;
    ``pattern``: the test files (under ``tests/``, in every folder) to run."""
    start = time.perf_counter()
    files = suite_files(pattern)
    shares = [files[k::processes] for k in range(min(processes, len(files)))]
    children = [subprocess.Popen([sys.executable, "-m", "pytest", *share, "-q", "-rfE", "-p", "no:cacheprovider"],
                                 cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                for share in shares]
    outputs = [child.communicate()[0] for child in children]
    if log_path is not None:
        log_path.write_text("".join(outputs))
    parts = [parse_pytest(output) for output in outputs]
    summed = {key: sum(part[key] for part in parts) for key in ("passed", "failed", "skipped", "errors")}
    return {"case": "suite", **summed, "failures": [name for part in parts for name in part["failures"]],
            "summary": " | ".join(part["summary"] for part in parts), "processes": processes,
            "exit_code": max(child.returncode for child in children),
            "seconds": round(time.perf_counter() - start, 1)}


class OffscreenView:
    """A width x height offscreen target that ``viewport.draw_view`` draws into as a 3D view would."""

    def __init__(self, scene, width: int, height: int):
        self.scene, self.width, self.height = scene, width, height
        self.offscreen = gpu.types.GPUOffScreen(width, height, format="RGBA16F")
        camera = camera_of(scene, width, height)
        self.view_proj = camera.view_proj
        self.view = scene.camera.matrix_world.inverted()
        self.pixels = Matrix(((2 / width, 0, 0, -1), (0, 2 / height, 0, -1), (0, 0, 1, 0), (0, 0, 0, 1)))

    def drain(self) -> None:
        """Wait for the GPU: a 1-texel readback of the target (it depends on every command of the draw)."""
        with self.offscreen.bind():
            gpu.state.active_framebuffer_get().read_color(0, 0, 1, 1, 4, 0, "FLOAT")

    def timed_draw(self, frame: int, stats_shown: bool = False) -> tuple[float, float]:
        """(ms, cpu_ms) of one draw of ``frame``, drained before: ``ms`` until the GPU is done (drained
        after), ``cpu_ms`` until ``draw_view`` returns (what the draw costs the CPU, the GPU still working)."""
        self.scene.frame_current = frame
        self.drain()
        start = time.perf_counter()
        with self.offscreen.bind():
            with gpu.matrix.push_pop():
                gpu.matrix.load_matrix(Matrix.Identity(4))
                gpu.matrix.load_projection_matrix(self.pixels)
                if stats_shown:
                    viewport.stats_panel_drawn()
                viewport.draw_view(self.scene, self.view_proj, self.view, self.width, self.height)
                returned = time.perf_counter()
        self.drain()
        return (time.perf_counter() - start) * 1e3, (returned - start) * 1e3

    def free(self) -> None:
        self.offscreen.free()


def measure_viewport(count: int, width: int, height: int, blend_mode: str, draws: int, preset: str = PRESET,
                     lights=(), render_values: dict | None = None, **effect_values) -> dict:
    """Playing, redrawing and playing with the Stats panel shown: median ms a draw, and what a draw asks of the GPU.
    ``lights``: stage lights added to the preset's scene; ``render_values``: the scene's render settings
    (``trail_draw``, ...); ``effect_values``: more of the effect's settings."""
    with tempfile.TemporaryDirectory() as out:
        scene = effect_scene(preset, count, width, height, (1, 10 * draws + 10), Path(out), blend_mode=blend_mode,
                             **effect_values)
        for name, value in (render_values or {}).items():
            setattr(scene.gpu_particles, name, value)
        add_stage_lights(lights, scene=scene)
        host = CountingHost()
        viewport.free()
        viewport._overlay = viewport.Overlay(host)
        view = OffscreenView(scene, width, height)
        try:
            for frame in (1, 2, 3):  # compilation, preroll
                view.timed_draw(frame)
            host.calls.clear()
            playing, playing_cpu = zip(*(view.timed_draw(frame) for frame in range(4, 4 + draws)))
            calls = dict(host.calls)
            last = 3 + draws
            redraw, redraw_cpu = zip(*(view.timed_draw(last) for _ in range(draws)))
            stats, stages = [], []
            for frame in range(last + 1, last + 1 + draws):
                stats.append(view.timed_draw(frame, stats_shown=True)[0])
                stages.append(viewport.last_stats().stage_ms)
        finally:
            view.free()
            viewport.free()
            addon.unregister()
    per_draw = {name: round(calls.get(key, 0) / draws, 2) for name, key in
                (("dispatches", "dispatch"), ("draws", "draw"), ("uploads", "upload"), ("clears", "clear"))}
    per_draw["waits"] = round((calls.get("read", 0) + calls.get("finish", 0)) / draws, 2)
    stage_ms = {f"stage {name} ms": round(statistics.median(s.get(name, 0.0) for s in stages), 3)
                for name in dict.fromkeys(name for s in stages for name in s)}
    return {"ms": statistics.median(playing), "cpu_ms": statistics.median(playing_cpu), "max_ms": max(playing),
            "redraw_ms": statistics.median(redraw), "redraw_cpu_ms": statistics.median(redraw_cpu),
            "stats_ms": statistics.median(stats), "draws_timed": draws, **per_draw, **stage_ms}


class Bakes:
    """``measure_bake`` once per distinct bake of a run: the end-to-end shot is the ``bake`` suite's
    PNG 1080p case (same preset, count, size, format, frames, blend mode and writer threads), so when
    both suites run the second takes the first's figures instead of baking the same shot again."""

    def __init__(self):
        self.measured: dict[tuple, tuple[str, dict]] = {}

    def measure(self, case: str, count: int, width: int, height: int, file_format: str, frames: int,
                blend_mode: str | None = None, preset: str = PRESET) -> tuple[dict, str | None]:
        """(``measure_bake``'s result, the case that measured it when an earlier one did, else None)."""
        mode = blend_mode or load_preset(preset).effect.blend_mode  # None: the preset's own
        key = (preset, count, width, height, file_format, frames, mode, None)  # None: the default writers
        if key in self.measured:
            first, result = self.measured[key]
            log(f"{case}: the same bake as {first}, measured once")
            return result, first
        result = measure_bake(preset, count, width, height, file_format, frames, blend_mode=blend_mode)
        self.measured[key] = (case, result)
        return result, None


def bake_suite(quick: bool, frames: int, bakes: Bakes) -> list[dict]:
    """The four bakes of issue 11 (the default preset) and the lit smoke preset's (issue 29)."""
    cases = [(*case, PRESET) for case in BAKE_CASES] + [(*LIT_BAKE_CASE, None, LIT_PRESET)]
    rows = []
    for file_format, width, height, count, mode, preset in cases:
        width, height, count = sized(width, height, count, quick)
        look = mode.lower() if mode else "lit"  # the lit case keeps the preset's own blend mode (alpha)
        case = f"{'png' if file_format == 'PNG' else 'exr'}-{height}p-{count_label(count)}-{look}"
        log(f"bake {case}: {frames} frames")
        result, first = bakes.measure(f"bake {case}", count, width, height, file_format, frames, mode, preset)
        rows.append({"case": case, "fps": result["fps"], "n": count, "width": width, "height": height,
                     "frames": frames, "preset": preset, "measured_by": measure_bake.__module__,
                     **measured_in(first), **{k: v for k, v in result.items() if k not in ("fps", "frames")}})
    return rows


def measured_in(first: str | None) -> dict:
    """A record's note that its bake is another case's measurement (``Bakes``), when it is."""
    return {"measured_in": first} if first else {}


def viewport_cases(quick: bool):
    """(case, width, height, count, blend mode) of every viewport case, sized down for ``--quick``."""
    for width, height, count, mode in VIEWPORT_CASES:
        width, height, count = sized(width, height, count, quick)
        yield f"{height}p-{count_label(count)}-{mode.lower()}", width, height, count, mode


def viewport_bench_arguments(description: str, argv=None) -> tuple[argparse.Namespace, int]:
    """The command line of the viewport benches beside this one (viewport_flush.py, viewport_timeline.py):
    their arguments and the draws a case times."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="64x36, 10K particles, 3 draws: checks the path")
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--out", type=Path, default=None, help="results folder (default bench/results/)")
    parser.add_argument("--cases", default="", help="viewport_timeline.py: only the cases whose names hold one of these comma-separated parts")
    args = parser.parse_args(argv)
    return args, 3 if args.quick else args.draws


def viewport_suite(quick: bool, draws: int) -> list[dict]:
    rows = []
    for case, width, height, count, mode in viewport_cases(quick):
        log(f"viewport {case}: {draws} draws playing, redrawing, with stats")
        rows.append({"case": case, **measure_viewport(count, width, height, mode, draws), "n": count,
                     "width": width, "height": height})
    width, height, count = sized(*FLIPBOOK_CASE, quick)
    case = f"{height}p-{count_label(count)}-flipbook"
    log(f"viewport {case}: {draws} draws textured, then with round sprites")
    textured = measure_viewport(count, width, height, "ALPHA", draws, render_values=FLIPBOOK_RENDER, **FLIPBOOK_VALUES)
    peer = measure_viewport(count, width, height, "ALPHA", draws, render_values=FLIPBOOK_RENDER, particle_type="SPRITE")
    rows.append({"case": case, **textured, "peer": "the same draw with round sprites (no sprite image)",
                 "peer_ms": peer["ms"], "texture_extra_ms": textured["ms"] - peer["ms"], "n": count,
                 "width": width, "height": height, **FLIPBOOK_VALUES, **FLIPBOOK_RENDER})
    return rows


def lighting_suite(quick: bool, draws: int) -> list[dict]:
    """Lit alpha sprites, a sun and a point light, both casting particle shadows, against the same draw unlit:
    the viewport suite's alpha sprites (the issue's cases), then the smoke preset's larger ones (``-smoke``)."""
    rows = []
    for preset, lights, suffix in ((PRESET, (SUN_LIGHT, POINT_LIGHT), ""), (LIT_PRESET, (POINT_LIGHT,), "-smoke")):
        for width, height, count in LIGHTING_CASES:
            width, height, count = sized(width, height, count, quick)
            case = f"{height}p-{count_label(count)}-lit-alpha{suffix}"
            log(f"lighting {case}: {draws} draws lit, then unlit")
            lit = measure_viewport(count, width, height, "ALPHA", draws, preset, lights, lighting="LIT")
            unlit = measure_viewport(count, width, height, "ALPHA", draws, preset, lights, lighting="EMISSION")
            rows.append({"case": case, **lit, "peer": "the same draw unlit (lighting Emission)",
                         "peer_ms": unlit["ms"], "lit_extra_ms": lit["ms"] - unlit["ms"], "n": count, "width": width,
                         "height": height, "preset": preset, "lights": "sun + point, both shadowed"})
    width, height, count = sized(*FLIPBOOK_CASE, quick)
    case = f"{height}p-{count_label(count)}-flipbook-relief"
    log(f"lighting {case}: {draws} draws of the lit flipbook with relief, then without")
    lit = {"lighting": "LIT", **FLIPBOOK_VALUES}
    relief = measure_viewport(count, width, height, "ALPHA", draws, PRESET, (SUN_LIGHT, POINT_LIGHT), FLIPBOOK_RENDER,
                              sprite_relief=RELIEF, **lit)
    even = measure_viewport(count, width, height, "ALPHA", draws, PRESET, (SUN_LIGHT, POINT_LIGHT), FLIPBOOK_RENDER,
                            **lit)
    rows.append({"case": case, **relief, "peer": "the same lit flipbook without relief", "peer_ms": even["ms"],
                 "relief_extra_ms": relief["ms"] - even["ms"], "n": count, "width": width, "height": height,
                 "sprite_relief": RELIEF, **lit, **FLIPBOOK_RENDER, "lights": "sun + point, both shadowed"})
    return rows


def events_cases(quick: bool):
    """(case, width, height, count, blend mode, scene values) of issue 31's viewport cases, sized down for ``--quick``;
    the scene values are ``measure_viewport``'s keyword arguments (preset, spawned effects, effect settings)."""
    width, height, count, points = TRAILS_CASE
    width, height, count = sized(width, height, count, quick)
    yield (f"{height}p-{count_label(count)}-trails{points}", width, height, count, "ADD",
           {"preset": TRAILS_PRESET, "trail_points": points})
    full_width, full_height, rockets, sparks = FIREWORKS_CASE
    width, height, rockets = sized(full_width, full_height, rockets, quick)
    sparks = sized(full_width, full_height, sparks, quick)[2]
    yield (f"{height}p-fireworks-{count_label(sparks)}", width, height, rockets, "ADD",
           {"preset": FIREWORKS_PRESET, "spawned": {"Sparks": {**FIREWORKS_SPARKS, "count": sparks}},
            **FIREWORKS_ROCKETS})
    width, height, _ = sized(full_width, full_height, 0, quick)
    for preset in (TRAILS_PRESET, FIREWORKS_PRESET):  # as shipped: what an artist's frame of them costs
        yield (f"{height}p-{preset}-as-shipped", width, height, load_preset(preset).effect.count, "ADD",
               {"preset": preset})


def trails_case(case: str, width: int, height: int, count: int, mode: str, values: dict, draws: int) -> dict:
    """1M particles of the comet preset with 32-point trails, additive, in the viewport: ``ms`` the product's
    segments added by screen tiles (trail_draw Splat: trail_tiles.py), ``peer_ms`` the same trails as rasterized
    ribbons."""
    log(f"events {case}: {draws} draws playing, redrawing, with stats; then as rasterized ribbons")
    splat = measure_viewport(count, width, height, mode, draws, **values)
    raster = measure_viewport(count, width, height, mode, draws, render_values={"trail_draw": "RIBBONS"}, **values)
    points = values.get("trail_points", load_preset(values["preset"]).effect.trail_points)
    return {"case": case, **splat, "peer": "the same trails as rasterized ribbons (trail_draw Ribbons)",
            "peer_ms": raster["ms"], "n": count, "trail_points": points, "width": width, "height": height,
            "preset": values["preset"]}


def fireworks_case(case: str, width: int, height: int, count: int, mode: str, values: dict, draws: int) -> dict:
    """The fireworks preset's family (rockets -> sparks -> crackle, sub-emitters) with 100K rockets and 4M spark
    slots: each draw steps the family a frame (events, scans, births) and draws it."""
    log(f"events {case}: {draws} draws playing, redrawing, with stats; then with the quads rasterized")
    shipped = dict(load_preset(values["preset"]).spawned)["Sparks"].count
    sparks = values.get("spawned", {}).get("Sparks", {}).get("count", shipped)
    tiled = measure_viewport(count, width, height, mode, draws, **values)
    with rasterized_quads():
        rasterized = measure_viewport(count, width, height, mode, draws, **values)
    return {"case": case, **tiled, "peer": "the same draw with the quads rasterized (bench/quad_peer.py)",
            "peer_ms": rasterized["ms"], "n": count + sparks, "parents": count, "children": sparks, "width": width,
            "height": height, "preset": values["preset"]}


def events_suite(quick: bool, draws: int) -> list[dict]:
    """Issue 31's cases: trails, and the sub-emitters' fireworks; then the comet and fireworks presets as shipped."""
    return [(fireworks_case if case[5]["preset"] == FIREWORKS_PRESET else trails_case)(*case, draws)
            for case in events_cases(quick)]


def end_to_end_suite(quick: bool, frames: int, peer_frames: int, bakes: Bakes) -> list[dict]:
    """ms per finished frame of a ``frames``-frame shot of ours (as a shot is baked: the writer threads'
    last frames are inside the time; the bake suite's own measurement when it baked the same shot)
    against ``peer_frames`` of Blender's way (seconds a frame, each frame the same work, so a few
    frames give its rate)."""
    width, height, count = sized(*END_TO_END, quick)
    case = f"png-{height}p-{count_label(count)}"
    log(f"end-to-end {case}: ours, {frames} frames")
    result, first = bakes.measure(f"end-to-end {case}", count, width, height, "PNG", frames)
    ours = 1e3 / result["fps"]
    log(f"end-to-end {case}: Blender's particles + EEVEE, {peer_frames} frames after a warm-up frame")
    with tempfile.TemporaryDirectory() as out:
        peer = blender_way_ms(load_preset(PRESET), count, width, height, peer_frames, Path(out))
    return [{"case": case, "ms_per_frame": ours, "peer": "blender-particles-eevee-1-sample",
             "peer_ms_per_frame": peer["peer_ms_per_frame"], "ratio": peer["peer_ms_per_frame"] / ours,
             "peer_simulate_ms": peer["peer_simulate_ms"], "peer_render_ms": peer["peer_render_ms"],
             "frames": frames, "peer_frames": peer_frames, "n": count, "width": width, "height": height,
             "startup": "excluded", **measured_in(first)}]


def final_render_suite(quick: bool) -> list[dict]:
    """bench/final_render.py's cases (24 frames; --quick: its tiny version, 4 frames)."""
    import final_render

    return [{"case": f"{case}-quick" if quick else case,
             **final_render.measure(frames=4 if quick else 24, **{**settings, **(final_render.QUICK if quick else {})})}
            for case, settings in final_render.CASES.items()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help=f"sizes / {QUICK_SCALE}, counts / {QUICK_COUNT_SCALE} (1080p 1M: 64x36 10K), 2 frames, "
                             "3 draws, no tests: checks every path")
    parser.add_argument("--skip-tests", action="store_true", help="leave out the blender-tests suite")
    parser.add_argument("--test-processes", type=int, default=1,
                        help="blender-tests: pytest processes side by side, the test files dealt among them")
    parser.add_argument("--test-log", type=Path, help="blender-tests: write the pytest output here")
    parser.add_argument("--suites", default="blender-tests,bake,viewport,lighting,events,interactions,end-to-end")
    parser.add_argument("--bake-frames", type=int, help="timed frames per bake case and of our end-to-end shot "
                                                        "(48; --quick 2)")
    parser.add_argument("--draws", type=int, help="timed draws per viewport measurement (30; --quick 3)")
    parser.add_argument("--peer-frames", type=int,
                        help="end-to-end frames of Blender's way after a warm-up frame (6; --quick 2); "
                             "ours bakes --bake-frames")
    parser.add_argument("--out", type=Path, default=None, help="results folder (default bench/results/)")
    args = parser.parse_args(argv)
    for name, full, quick in (("bake_frames", 48, 2), ("draws", 30, 3), ("peer_frames", 6, 2)):
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else full)
    suites = args.suites.split(",")
    if args.quick or args.skip_tests:
        suites = [s for s in suites if s != "blender-tests"]
    device = BlenderHost().device
    log(f"device: {device}; suites: {', '.join(suites)}")
    started = time.perf_counter()
    bakes = Bakes()
    runs = {"blender-tests": lambda: [run_tests(args.test_processes, args.test_log)],
            "bake": lambda: bake_suite(args.quick, args.bake_frames, bakes),
            "viewport": lambda: viewport_suite(args.quick, args.draws),
            "lighting": lambda: lighting_suite(args.quick, args.draws),
            "events": lambda: events_suite(args.quick, args.draws),
            "interactions": lambda: interactions.suite(BlenderHost(), args.quick, args.draws, log),
            "end-to-end": lambda: end_to_end_suite(args.quick, args.bake_frames, args.peer_frames, bakes),
            "export": lambda: export_suite(args.quick, args.bake_frames),
            "final-render": lambda: final_render_suite(args.quick)}
    for suite in suites:
        log(f"suite {suite}")
        records.write(suite, device, runs[suite](), results=args.out)
    log(f"done in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
