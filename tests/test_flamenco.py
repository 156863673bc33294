"""The Flamenco job type compiled under Node against a stand-in of Flamenco 3's author API, and its
commands run end to end here (simulate to the cache, then two chunks): the frames match one bake."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import bpy
import pytest
from conftest import add_effect

ROOT = Path(__file__).resolve().parent.parent
FARM = ROOT / "farm" / "flamenco"
NODE = shutil.which("node")


def compile_job(settings):
    result = subprocess.run([NODE, str(FARM / "author_standin.js"), str(FARM / "gpu_particles.js"),
                             json.dumps({"settings": settings})], capture_output=True, text=True, timeout=60)
    return result


@pytest.mark.skipif(NODE is None, reason="needs Node.js")
def test_job_compiles_to_a_simulate_task_and_dependent_chunks():
    result = compile_job({"frames": "1-25", "chunk_size": 10, "blendfile": "/farm/shot.blend"})
    assert result.returncode == 0, result.stderr
    tasks = json.loads(result.stdout)["tasks"]
    assert [t["name"] for t in tasks] == ["simulate-to-cache", "bake-1-10", "bake-11-20", "bake-21-25"]
    assert [t["dependencies"] for t in tasks] == [[], *[["simulate-to-cache"]] * 3]
    command = tasks[3]["commands"][0]
    assert command["name"] == "blender-render" and command["parameters"]["exe"] == "{blender}"
    assert command["parameters"]["blendfile"] == "/farm/shot.blend"
    assert command["parameters"]["args"][-1] == "import bpy; bpy.ops.gpu_particles.bake(frame_start=21, frame_end=25)"
    bad = compile_job({"frames": "9-3", "blendfile": "/farm/shot.blend"})
    assert bad.returncode == 2 and "frame range runs backwards" in bad.stderr


@pytest.mark.skipif(NODE is None, reason="needs Node.js")
@pytest.mark.slow
def test_emitted_commands_run_end_to_end_and_match_one_bake(scene, tmp_path):
    add_effect(count=3000, turbulence_strength=1.0)
    scene.frame_end = 8
    scene.gpu_particles.use_disk_cache = False
    scene.gpu_particles_output.bake_path = str(tmp_path / "single" / "f_####")
    assert bpy.ops.gpu_particles.bake() == {"FINISHED"}
    scene.gpu_particles.use_disk_cache = True
    scene.gpu_particles_output.bake_path = "//farm/f_####"
    blendfile = tmp_path / "shot.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blendfile), copy=True)

    result = compile_job({"frames": "1-8", "chunk_size": 4, "blendfile": str(blendfile), "blender_args": "-b -y"})
    assert result.returncode == 0, result.stderr
    for task in json.loads(result.stdout)["tasks"]:  # in order: the simulate task first, as its dependents wait
        for command in task["commands"]:
            p = command["parameters"]
            argv = [sys.executable, str(FARM / "local_blender.py"), *p["exeArgs"].split(), *p["argsBefore"],
                    p["blendfile"], *p["args"]]
            run = subprocess.run(argv, capture_output=True, text=True, timeout=600)
            assert run.returncode == 0, f"{task['name']}: {run.stderr[-2000:]}"
    manifest = json.loads((tmp_path / "gpu_particles_cache" / "manifest.json").read_text())
    assert sorted(map(int, manifest["frames"])) == [1, 2, 3, 4, 5, 6, 7, 8][::scene.gpu_particles.cache_interval]
    single, farm = (sorted((tmp_path / name).glob("*.png")) for name in ("single", "farm"))
    assert [p.name for p in farm] == [p.name for p in single] and len(farm) == 8
    for a, b in zip(single, farm):
        assert a.read_bytes() == b.read_bytes(), a.name
