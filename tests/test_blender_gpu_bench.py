"""bench/blender_gpu.py: the GPU host's one benchmark, run end to end here at tiny sizes (no timings checked)."""

import json
import math
import re
import subprocess
import sys

import pytest
from conftest import ROOT

REQUIRED = {
    "bake": ("fps",),
    "viewport": ("ms", "cpu_ms", "max_ms", "redraw_ms", "redraw_cpu_ms", "stats_ms", "dispatches", "draws", "waits"),
    "end-to-end": ("ms_per_frame", "peer", "peer_ms_per_frame", "frames"),
}


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
    assert len(found["bake"]) == 4 and len(found["viewport"]) == 3 and len(found["end-to-end"]) == 1
    for suite, rows in found.items():
        for row in rows:
            assert {"case", "device", "date", "command"} <= set(row) and row["device"]
            assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", row["date"]) and "blender_gpu.py --quick" in row["command"]
            for name in REQUIRED[suite]:
                value = row[name]
                assert isinstance(value, str) or math.isfinite(value), (suite, row["case"], name)
    assert {path: path.stat().st_mtime for path in results.iterdir()} == before, "bench/results/ untouched"


def test_pytest_summary_is_parsed():
    from bench.blender_gpu import parse_pytest

    output = ("..F..E\nFAILED tests/test_look.py::test_x[a-b] - AssertionError: 2.4%\n"
              "ERROR tests/test_sorting.py::test_y - RuntimeError\n"
              "==== 3 failed, 469 passed, 1 error in 80.12s (0:01:20) ====\n")
    parsed = parse_pytest(output)
    assert (parsed["passed"], parsed["failed"], parsed["errors"]) == (469, 3, 1)
    assert parsed["failures"] == ["tests/test_look.py::test_x[a-b]", "tests/test_sorting.py::test_y"]
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
    assert len(bakes_done) == 4, "the shot is the bake suite's PNG 1080p case: baked once"
    png = next(row for row in rows if row["case"] == "png-1080p-1M-add")
    assert "measured_in" not in png
    assert end_to_end["ms_per_frame"] == 1e3 / png["fps"] and end_to_end["measured_in"] == "bake png-1080p-1M-add"

    [longer] = blender_gpu.end_to_end_suite(False, 96, 6, bakes)  # another shot length: another bake
    assert bakes_done[-1][5] == 96 and len(bakes_done) == 5 and "measured_in" not in longer
    bakes.measure("alpha", 1_000_000, 1920, 1080, "PNG", 48, "ALPHA")  # another blend mode: another bake
    assert len(bakes_done) == 6

    alone = blender_gpu.Bakes()  # the end-to-end suite on its own bakes its shot
    [own] = blender_gpu.end_to_end_suite(False, 48, 6, alone)
    assert len(bakes_done) == 7 and "measured_in" not in own
