"""bench/blender_gpu.py: the GPU host's one benchmark, run end to end here at tiny sizes (no timings checked)."""

import json
import math
import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT

REQUIRED = {
    "bake": ("fps",),
    "viewport": ("ms", "cpu_ms", "max_ms", "redraw_ms", "redraw_cpu_ms", "stats_ms", "dispatches", "draws", "waits"),
    "lighting": ("ms", "peer_ms"),  # and each case's own extra: lit_extra_ms, or relief_extra_ms (EXTRA)
    "events": ("ms", "cpu_ms", "draws"),
    "interactions": (),  # each case's own (EXTRA): a step's ms and its grid's, or the peers' ms a frame
    "end-to-end": ("ms_per_frame", "peer", "peer_ms_per_frame", "frames"),
}
EXTRA = {"lighting": lambda case: ("relief_extra_ms" if case.endswith("relief") else "lit_extra_ms",),
         "interactions": lambda case: (("ms_per_frame", "peer_ms_per_frame", "timeline_gpu_ms", "streamed_gpu_ms")
                                       if "-vs-blender" in case
                                       else ("ms", "grid_ms"))}


@pytest.mark.slow
def test_quick_run_writes_every_suites_records(tmp_path):
    results = ROOT / "bench" / "results"
    before = {path: path.stat().st_mtime for path in results.iterdir()}
    result = subprocess.run([sys.executable, "bench/blender_gpu.py", "--quick", "--peer-frames", "1", "--draws", "2",
                             "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    found = {}
    for path in tmp_path.glob("*.json"):
        for record in json.loads(path.read_text()):
            found.setdefault(record["suite"], []).append(record)
    assert set(found) == set(REQUIRED), "--quick leaves the test suite out"
    assert len(found["bake"]) == 5 and len(found["viewport"]) == 4 and len(found["end-to-end"]) == 1
    assert [row["case"] for row in found["lighting"]] == ["36p-10K-lit-alpha", "36p-40K-lit-alpha",
                                                      "36p-10K-lit-alpha-smoke", "36p-40K-lit-alpha-smoke",
                                                      "36p-10K-flipbook-relief"]
    assert [row["case"] for row in found["events"]] == ["36p-10K-trails32", "36p-fireworks-40K", "36p-comet-as-shipped",
                                                       "36p-fireworks-as-shipped"]
    assert [row["case"] for row in found["interactions"]] == [
        f"{case}-quick" for case in ("grid-4M", "granular-1M", "fluid-1M", "flocking-1M", "fluid-vs-blender",
                                     "flocking-vs-blender")]
    for suite, rows in found.items():
        for row in rows:
            assert {"case", "device", "date", "command"} <= set(row) and row["device"]
            assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", row["date"]) and "blender_gpu.py --quick" in row["command"]
            for name in (*REQUIRED[suite], *(EXTRA[suite](row["case"]) if suite in EXTRA else ())):
                value = row[name]
                assert isinstance(value, str) or math.isfinite(value), (suite, row["case"], name)
    assert {path: path.stat().st_mtime for path in results.iterdir()} == before, "bench/results/ untouched"


def test_pytest_summary_is_parsed():
    from bench.blender_gpu import parse_pytest

    output = ("..F..E\nFAILED tests/engine/look/test_look.py::test_x[a-b] - AssertionError: 2.4%\n"
              "ERROR tests/engine/order/test_sorting.py::test_y - RuntimeError\n"
              "==== 3 failed, 469 passed, 24 skipped, 1 error in 80.12s (0:01:20) ====\n")
    parsed = parse_pytest(output)
    assert (parsed["passed"], parsed["failed"], parsed["skipped"], parsed["errors"]) == (469, 3, 24, 1)
    assert parsed["failures"] == ["tests/engine/look/test_look.py::test_x[a-b]", "tests/engine/order/test_sorting.py::test_y"]
    assert parse_pytest("472 passed in 70.0s")["failed"] == 0


def test_end_to_end_takes_the_bake_suites_measurement_of_the_same_shot(monkeypatch):
    from bench import blender_gpu

    bakes_done = []

    def measure_bake(preset, count, width, height, file_format, frames, blend_mode=None):
        bakes_done.append((preset, count, width, height, file_format, frames, blend_mode))
        return {"fps": 10.0 * len(bakes_done), "first_frame_s": 1.0}

    monkeypatch.setattr(blender_gpu, "measure_bake", measure_bake)
    monkeypatch.setattr(blender_gpu, "blender_way_ms", lambda *args: {
        "peer_ms_per_frame": 5000.0, "peer_simulate_ms": 1000.0, "peer_render_ms": 4000.0})
    bakes = blender_gpu.Bakes()
    rows = blender_gpu.bake_suite(False, 48, bakes)
    [end_to_end] = blender_gpu.end_to_end_suite(False, 48, 6, bakes)
    assert len(bakes_done) == 5, "the shot is the bake suite's PNG 1080p case: baked once"
    assert bakes_done[-1][0] == "smoke" and rows[-1]["case"] == "exr-1080p-1M-lit"
    png = next(row for row in rows if row["case"] == "png-1080p-1M-add")
    assert "measured_in" not in png
    assert end_to_end["ms_per_frame"] == 1e3 / png["fps"] and end_to_end["measured_in"] == "bake png-1080p-1M-add"

    [longer] = blender_gpu.end_to_end_suite(False, 96, 6, bakes)  # another shot length: another bake
    assert bakes_done[-1][5] == 96 and len(bakes_done) == 6 and "measured_in" not in longer
    bakes.measure("alpha", 1_000_000, 1920, 1080, "PNG", 48, "ALPHA")  # another blend mode: another bake
    assert len(bakes_done) == 7

    alone = blender_gpu.Bakes()  # the end-to-end suite on its own bakes its shot
    [own] = blender_gpu.end_to_end_suite(False, 48, 6, alone)
    assert len(bakes_done) == 8 and "measured_in" not in own


@pytest.mark.slow
def test_viewport_timeline_times_every_dispatch_with_gl_timestamps(tmp_path):
    """bench/viewport_timeline.py at tiny sizes: GL timestamp queries through ctypes into Blender's
    context (llvmpipe here), every case recorded, the kernels' times adding up within the GPU's span."""
    result = subprocess.run([sys.executable, "bench/viewport_timeline.py", "--quick", "--out", str(tmp_path)],
                            cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (path,) = tmp_path.glob("*-viewport-timeline.json")
    rows = json.loads(path.read_text())
    assert [row["case"] for row in rows] == ["36p-40K-add", "36p-10K-alpha", "36p-40K-alpha", "36p-10K-flipbook",
                                             "36p-10K-lit-alpha", "36p-10K-lit-alpha-smoke", "36p-10K-flipbook-relief",
                                             "36p-10K-trails32", "36p-fireworks-40K", "36p-comet-as-shipped",
                                             "36p-fireworks-as-shipped"]
    for row in rows:
        assert row["commands"] > 0 and row["top"], row
        assert 0 < row["kernels_ms"] <= row["gpu_ms"] + 1e-3 and row["starved_ms"] <= row["gaps_ms"] + 1e-3
    assert "sprite_blend" in rows[1]["top"] and "sprite_blend" not in rows[0]["top"]
    assert "light_particles" in rows[4]["top"] or any(name.startswith("shadow_") for name in rows[4]["top"])
    assert "trail_accumulate" in rows[7]["top"] and any(name.startswith("spawn_") for name in rows[8]["top"])


def test_viewport_timeline_runs_only_the_cases_asked_for(tmp_path):
    """--cases: only the cases whose names hold one of the parts given."""
    result = subprocess.run([sys.executable, "bench/viewport_timeline.py", "--quick", "--cases", "flipbook,smoke",
                             "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (path,) = tmp_path.glob("*-viewport-timeline.json")
    assert [row["case"] for row in json.loads(path.read_text())] == ["36p-10K-flipbook", "36p-10K-lit-alpha-smoke",
                                                                     "36p-10K-flipbook-relief"]


@pytest.mark.slow
def test_occluder_bench_measures_kept_meshes_against_reading_every_draw(tmp_path):
    """bench/occluder_bench.py at tiny sizes: one record per occluder size, its peer measured in the same run."""
    result = subprocess.run([sys.executable, "bench/occluder_bench.py", "--count", "2000", "--size", "64x36",
                             "--vertices", "500,5000", "--objects", "20", "--draws", "2", "--out", str(tmp_path)],
                            cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (path,) = tmp_path.glob("*-viewport-occluder.json")
    rows = json.loads(path.read_text())
    assert [row["vertices"] for row in rows] == [482, 4902, 60]  # UV spheres of about 500 and 5000 vertices
    assert [row["objects"] for row in rows] == [1, 1, 20]
    for row in rows:
        assert row["suite"] == "viewport-occluder" and row["peer"] == "occluders read every draw"
        assert all(math.isfinite(row[name]) and row[name] > 0 for name in ("ms", "cpu_ms", "peer_ms", "peer_cpu_ms"))


def test_timeline_attributes_gaps_to_a_starved_gpu_when_the_cpu_called_late():
    """Two commands 1 ms apart on the GPU: the gap counts as starved when the second was called on the
    CPU after the first had finished, as idle-but-busy-elsewhere otherwise."""
    from bench import gl_timeline

    class Stamps:
        results = {1: 0, 2: 1_000_000, 3: 2_000_000, 4: 2_500_000}

        def result_ns(self, query):
            return self.results[query]

    host = type("Host", (), {})()
    host.stamps, host.recording = Stamps(), True
    host.events = [("a", 0.0, 1, 2), ("b", 0.0015, 3, 4)]  # b called 0.5 ms after a finished
    figures = gl_timeline.timeline(host, cpu_start=0.0, gpu_start=0)
    assert figures["gpu_ms"] == pytest.approx(2.5) and figures["kernels_ms"] == pytest.approx(1.5)
    assert figures["gaps_ms"] == pytest.approx(1.0) and figures["starved_ms"] == pytest.approx(0.5)
    assert figures["per_kernel"] == {"a": pytest.approx(1.0), "b": pytest.approx(0.5)}


def test_the_gpu_suite_runs_the_test_files_of_every_folder():
    from bench import blender_gpu

    files = blender_gpu.suite_files()
    assert "tests/engine/seam/test_seam.py" in files and "tests/product/test_blender_gpu_bench.py" in files
    assert len(files) == len(list((ROOT / "tests").rglob("test_*.py"))) and files == sorted(files)
    assert blender_gpu.suite_files("test_seam*.py") == ["tests/engine/seam/test_seam.py"]
