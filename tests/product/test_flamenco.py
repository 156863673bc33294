"""The Flamenco job type compiled under Node against a stand-in of Flamenco 3 Manager's job compiler
(strict mode, its frameChunker, settings as submitted), and its commands run end to end here (simulate
to the cache, then two chunks): the frames match one bake."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.product.farm_shot import FRAMES, assert_farm_frames_match, bake_once_and_save

ROOT = Path(__file__).resolve().parents[2]
FARM = ROOT / "farm" / "flamenco"
NODE = shutil.which("node")


needs_node = pytest.mark.skipif(NODE is None, reason="needs Node.js")


def compile_job(settings, job_type=FARM / "gpu_particles.js"):
    return subprocess.run([NODE, str(FARM / "author_standin.js"), str(job_type), json.dumps({"settings": settings})],
                          capture_output=True, text=True, timeout=60)


def compiled_tasks(settings):
    result = compile_job(settings)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["tasks"]


def bakes(task):
    """The bake operator calls of a task's one command."""
    (command,) = task["commands"]
    return command["parameters"]["args"][-1].removeprefix("import bpy; ").split("; ")


@needs_node
def test_job_compiles_to_a_simulate_task_and_dependent_chunks():
    tasks = compiled_tasks({"frames": "1-25", "chunk_size": 10, "blendfile": "/farm/shot.blend"})
    assert [t["name"] for t in tasks] == ["simulate-to-cache", "bake-1-10", "bake-11-20", "bake-21-25"]
    assert [t["dependencies"] for t in tasks] == [[], *[["simulate-to-cache"]] * 3]
    parameters = tasks[3]["commands"][0]["parameters"]
    assert tasks[3]["commands"][0]["name"] == "blender-render"
    assert (parameters["exe"], parameters["exeArgs"]) == ("{blender}", "{blenderArgs}")  # the Manager's variables
    assert parameters["blendfile"] == "/farm/shot.blend"
    assert bakes(tasks[0]) == ["bpy.ops.gpu_particles.bake_simulation()"]
    assert bakes(tasks[3]) == ["bpy.ops.gpu_particles.bake(frame_start=21, frame_end=25)"]


@needs_node
def test_two_frame_chunks_as_frame_chunker_writes_them():
    """Flamenco's frameChunker writes a two-frame chunk as "11,12": the job type bakes it, not refuses it."""
    tasks = compiled_tasks({"frames": "1-12", "chunk_size": 10, "blendfile": "b.blend"})
    assert [t["name"] for t in tasks[1:]] == ["bake-1-10", "bake-11,12"]
    assert bakes(tasks[2]) == ["bpy.ops.gpu_particles.bake(frame_start=11, frame_end=12)"]
    tasks = compiled_tasks({"frames": "1-242", "chunk_size": 10, "blendfile": "b.blend"})
    assert len(tasks) == 1 + 25 and tasks[-1]["name"] == "bake-241,242"
    assert bakes(tasks[-1]) == ["bpy.ops.gpu_particles.bake(frame_start=241, frame_end=242)"]
    tasks = compiled_tasks({"frames": "1-7", "chunk_size": 2, "blendfile": "b.blend"})
    assert [t["name"] for t in tasks[1:]] == ["bake-1,2", "bake-3,4", "bake-5,6", "bake-7"]
    assert bakes(tasks[-1]) == ["bpy.ops.gpu_particles.bake(frame_start=7, frame_end=7)"]
    tasks = compiled_tasks({"frames": "1-10,20-25,40", "chunk_size": 4, "blendfile": "b.blend"})
    assert [t["name"] for t in tasks[1:]] == ["bake-1-4", "bake-5-8", "bake-9,10,20,21", "bake-22-25", "bake-40"]
    assert bakes(tasks[3]) == ["bpy.ops.gpu_particles.bake(frame_start=9, frame_end=10)",
                               "bpy.ops.gpu_particles.bake(frame_start=20, frame_end=21)"]


@needs_node
@pytest.mark.parametrize(("settings", "message"), [
    ({"frames": "1-12", "chunk_size": 0}, "chunk_size must be a whole number of frames, 1 or more, not 0"),
    ({"frames": "1-12", "chunk_size": -3}, "1 or more, not -3"),
    ({"frames": "9-3", "chunk_size": 10}, "frame range runs backwards: 9 to 3"),
    ({"frames": "1-a", "chunk_size": 10}, "frames must be ranges like 1-240"),
    ({"chunk_size": 10}, "setting 'frames' is missing"),  # the Manager fills no defaults and checks no `required`
    ({"frames": "1-12"}, "setting 'chunk_size' is missing"),
])
def test_bad_settings_are_refused_at_compile_time(settings, message):
    result = compile_job({"blendfile": "b.blend", **settings})
    assert result.returncode == 2 and message in result.stderr, result.stderr


@needs_node
def test_chunk_size_has_a_minimum_in_the_submission_form():
    source = (FARM / "gpu_particles.js").read_text()
    assert 'key: "chunk_size", type: "int32", default: 10, propargs: { min: 1 }' in source
    assert "blender_cmd" not in source and "blender_args" not in source


FRAME_CHUNKS_JOB_TYPE = """
const JOB_TYPE = { label: "chunks", settings: [] };
function compileJob(job) {
    for (const chunk of frameChunker(job.settings.frames, job.settings.chunk_size)) {
        job.addTask(author.Task(chunk, "misc"));
    }
}
"""


@needs_node
@pytest.mark.parametrize(("frames", "chunk_size", "chunks"), [  # Flamenco's own js_globals_test.go cases
    ("1..10,20..25,40,3..8", 4, ["1-4", "5-8", "9,10,20,21", "22-25", "40"]),
    ("1-10,20-25,40", 4, ["1-4", "5-8", "9,10,20,21", "22-25", "40"]),
    (" 1  .. 10,\t20..25\n,40   ", 4, ["1-4", "5-8", "9,10,20,21", "22-25", "40"]),
    ("47", 4, ["47"]),
    ("1-3", 3, ["1-3"]),
    ("1-12", 10, ["1-10", "11,12"]),
    ("1-5,7", 10, ["1-5,7"]),
    ("1-10,5-8,12-11", 20, ["1-10"]),  # each frame once; a backwards part adds none
])
def test_stand_in_frame_chunker_is_flamencos(tmp_path, frames, chunk_size, chunks):
    job_type = tmp_path / "frame_chunks.js"
    job_type.write_text(FRAME_CHUNKS_JOB_TYPE)
    result = compile_job({"frames": frames, "chunk_size": chunk_size}, job_type)
    assert result.returncode == 0, result.stderr
    assert [t["name"] for t in json.loads(result.stdout)["tasks"]] == chunks


@needs_node
@pytest.mark.parametrize(("frames", "chunk_size", "message"), [
    ("   ", 4, 'invalid range "": empty range'),
    ("9-3", 4, 'invalid range "9-3": empty range'),
    ("1-2-3", 4, 'invalid range "1-2-3": 1-2-3'),
    ("1-12", 0, "invalid chunk size, must be positive number: 0"),
])
def test_stand_in_frame_chunker_refuses_as_flamencos(tmp_path, frames, chunk_size, message):
    job_type = tmp_path / "frame_chunks.js"
    job_type.write_text(FRAME_CHUNKS_JOB_TYPE)
    result = compile_job({"frames": frames, "chunk_size": chunk_size}, job_type)
    assert result.returncode == 2 and message in result.stderr, result.stderr


@needs_node
def test_stand_in_runs_job_types_in_strict_mode(tmp_path):
    """The Manager compiles job types as strict code: a sloppy-mode slip fails there, so it fails here."""
    job_type = tmp_path / "sloppy.js"
    job_type.write_text(FRAME_CHUNKS_JOB_TYPE.replace("for (const chunk of", "undeclared = 1;\n    for (const chunk of"))
    result = compile_job({"frames": "1-3", "chunk_size": 1}, job_type)
    assert result.returncode == 2 and "undeclared is not defined" in result.stderr, result.stderr


@needs_node
@pytest.mark.slow
def test_emitted_commands_run_end_to_end_and_match_one_bake(scene, tmp_path):
    blendfile = bake_once_and_save(scene, tmp_path)
    for task in compiled_tasks({"frames": f"1-{FRAMES}", "chunk_size": 4, "blendfile": str(blendfile)}):
        for command in task["commands"]:  # in order: the simulate task first, as its dependents wait
            p = command["parameters"]
            blender_args = {"{blenderArgs}": ["-b", "-y"]}[p["exeArgs"]]  # a worker's default {blenderArgs}
            argv = [sys.executable, str(FARM / "local_blender.py"), *blender_args, *p["argsBefore"],
                    p["blendfile"], *p["args"]]
            run = subprocess.run(argv, capture_output=True, text=True, timeout=600)
            assert run.returncode == 0, f"{task['name']}: {run.stderr[-2000:]}"
    manifest = json.loads((tmp_path / "gpu_particles_cache" / "manifest.json").read_text())
    assert sorted(map(int, manifest["frames"])) == list(range(1, FRAMES + 1))[::scene.gpu_particles.cache_interval]
    assert_farm_frames_match(tmp_path)
