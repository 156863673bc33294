"""Reliability: short soaks, settings fuzzed through Blender's properties, a killed bake resumed from the cache."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import bpy
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from addon.engine.settings.settings import EFFECT_FIELDS
from tests.conftest import add_effect

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

# Fields whose upper range costs GPU memory or minutes rather than correctness, fuzzed over a smaller span
# (count up to 2^28 is 8 GiB of state; preroll 1000 s is 24,000 steps, run in pieces by test_sim_cache).
CAPPED = {"count": 4096, "preroll": 1.0, "turbulence_resolution": 16, "substeps": 4, "sort_passes": 64}


def field_values(field):
    """Any value the property accepts, its bounds (as float32, Blender's storage) favoured."""
    if field.kind == "enum":
        return st.sampled_from(field.items)
    if field.kind == "string":  # an image's name: missing images are refused before a bake (test_sprite_textures.py)
        return st.just("")
    if field.kind == "bool":
        return st.booleans()
    high = CAPPED.get(field.name, field.max)
    if field.kind == "int":
        return st.one_of(st.sampled_from([int(field.min), int(high)]), st.integers(int(field.min), int(high)))
    bounds = [float(np.float32(field.min)), float(np.float32(high))]
    number = st.one_of(st.sampled_from(bounds), st.floats(*bounds, width=32))
    return st.tuples(number, number, number) if field.kind in ("vec3", "color") else number


EFFECT = st.fixed_dictionaries({f.name: field_values(f) for f in EFFECT_FIELDS})


def test_soak_frames_short():
    from bench.soak import soak_frames

    row = soak_frames(48, 5000)
    assert row["non_finite_frames"] == 0 and row["worst_live_count_error"] <= 1


def test_register_cycles_leave_no_textures_or_handlers():
    from bench.soak import soak_cycles

    row = soak_cycles(4)
    assert row["textures_after_last"] == row["textures_after_2nd"] < row["textures_while_rendering"]
    assert row["app_handlers_after_last"] == row["app_handlers_after_2nd"] and row["draw_handlers_left"] == 0


@pytest.mark.slow
def test_fuzzed_settings_always_bake_complete_frames(scene, tmp_path):
    from addon.output.bake import BakeError, BakeJob

    bpy.ops.mesh.primitive_cube_add(size=0.5)  # a surface, so every emitter shape (MESH too) has one
    effect = add_effect()
    scene.frame_end = 2
    scene.render.resolution_x, scene.render.resolution_y = 24, 16

    @settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(EFFECT)
    def bake(values):
        for name, value in values.items():
            setattr(effect, name, value)  # through the property: Blender clamps and stores float32
        try:
            job = BakeJob(scene)
        except BakeError as error:  # a combination refused up front (e.g. trails with the Grid Cell sort)
            assert len(str(error)) > 20, "the refusal says why"
            return
        while not job.finished:
            job.step()
        job.close()
        for path in job.written:
            image = bpy.data.images.load(str(path))
            assert tuple(image.size) == (24, 16)
            bpy.data.images.remove(image)
        assert not [p for p in job.plan.output_dir.iterdir() if ".partial" in p.name]

    bake()


@pytest.mark.slow
def test_killed_bake_leaves_complete_frames_and_resumes_from_the_cache(tmp_path):
    out, cache = tmp_path / "seq", tmp_path / "cache"
    args = [sys.executable, "-m", "addon.cli", "bake", "--preset", "default", "--res", "64x36", "--count", "4000",
            "--shot", "1-40", "--out", str(out), "--cache", str(cache)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([*args, "--frames", "1-40"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while len(list(out.glob("frame_*.png"))) < 15 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()
    frames = sorted(out.glob("frame_*.png"))
    assert 15 <= len(frames) < 40, "killed mid-bake"
    for path in frames:  # every frame under its final name is complete
        image = bpy.data.images.load(str(path))
        assert tuple(image.size) == (64, 36)
        bpy.data.images.remove(image)
    # Writer threads finish frames out of order: resume from the first frame missing on disk.
    present = {int(path.stem.split('_')[1]) for path in frames}
    resume = min(set(range(1, 41)) - present)
    checkpoints = [int(f) for f in json.loads((cache / "manifest.json").read_text())["frames"]]
    rerun = subprocess.run([*args, "--frames", f"{resume}-40"], cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert sorted(p.name for p in out.glob("frame_*.png")) == [f"frame_{n:04d}.png" for n in range(1, 41)]
    record = json.loads((out / "gpu_particles_bake.json").read_text())
    assert record["cache"]["loaded_checkpoints"] == [max(c for c in checkpoints if c <= resume)], \
        "the rerun started from the killed bake's latest checkpoint before the missing frames"
