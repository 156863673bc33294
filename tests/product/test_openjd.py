"""The Open Job Description template, checked and run by its real runner (openjd-cli): ``openjd check``,
then ``openjd run`` of the simulate step and of the render step's chunks, in order, through
farm/flamenco/local_blender.py as the Blender command; the frames match one bake. Bad parameters are
refused before anything runs. The Deadline Cloud job bundle beside it uses the same template."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.product.farm_shot import FRAMES, assert_farm_frames_match, bake_once_and_save

yaml = pytest.importorskip("yaml", reason="needs PyYAML (openjd-cli brings it)")

ROOT = Path(__file__).resolve().parents[2]
FARM = ROOT / "farm"
TEMPLATE = FARM / "openjd" / "gpu_particles.yaml"
BUNDLE = FARM / "openjd" / "gpu_particles_bundle"
OPENJD = shutil.which("openjd", path=str(Path(sys.executable).parent)) or shutil.which("openjd")

pytestmark = pytest.mark.skipif(OPENJD is None, reason="needs openjd-cli (tools/setup.sh installs it)")


def openjd(*args, timeout=60):
    return subprocess.run([OPENJD, *map(str, args)], capture_output=True, text=True, timeout=timeout)


def run_step(step, parameters, timeout=60):
    options = [option for name, value in parameters.items() for option in ("-p", f"{name}={value}")]
    return openjd("run", TEMPLATE, "--step", step, "--no-run-dependencies", *options, timeout=timeout)


def test_template_passes_openjd_check():
    result = openjd("check", TEMPLATE)
    assert result.returncode == 0, result.stdout + result.stderr


def test_bundle_is_the_template_with_values_it_defines():
    """A Deadline Cloud job bundle: template.yaml (this template), parameter_values.yaml, asset_references.yaml."""
    assert (BUNDLE / "template.yaml").read_text() == TEMPLATE.read_text()
    defined = {p["name"] for p in yaml.safe_load(TEMPLATE.read_text())["parameterDefinitions"]}
    values = yaml.safe_load((BUNDLE / "parameter_values.yaml").read_text())["parameterValues"]
    assert {v["name"] for v in values if not v["name"].startswith("deadline:")} <= defined
    assets = yaml.safe_load((BUNDLE / "asset_references.yaml").read_text())["assetReferences"]
    assert set(assets) == {"inputs", "outputs"}


@pytest.mark.parametrize(("parameters", "message"), [
    ({"ChunkSize": 0}, "Value (0) for parameter ChunkSize must be at least 1"),
    ({"Frames": "9-3"}, "a descending range must have a negative step"),
    ({"Frames": "1-x"}, "Unexpected 'x' in '1-x'"),
])
def test_bad_parameters_are_refused_before_anything_runs(tmp_path, parameters, message):
    result = run_step("Render", {"BlendFile": tmp_path / "shot.blend", "BlenderExecutable": tmp_path / "absent",
                                 **parameters})
    assert result.returncode != 0 and "ERROR generating Job" in result.stdout, result.stdout + result.stderr
    assert message in result.stdout
    assert "Running step" not in result.stdout


@pytest.mark.slow
def test_steps_run_in_order_and_match_one_bake(scene, tmp_path):
    blendfile = bake_once_and_save(scene, tmp_path)  # the template's own paths replace the .blend's
    blender = tmp_path / "blender"  # the worker's `blender`: this machine has only the bpy module
    blender.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FARM / "flamenco" / "local_blender.py"}" "$@"\n')
    blender.chmod(0o755)
    parameters = {"BlendFile": blendfile, "Frames": f"1-{FRAMES}", "ChunkSize": 4, "CacheDirectory": tmp_path / "cache",
                  "OutputDirectory": tmp_path / "output", "OutputPattern": "f_####", "BlenderExecutable": blender}

    simulate = run_step("Simulate", parameters, timeout=600)  # first: the render step depends on it
    assert simulate.returncode == 0, simulate.stdout[-3000:]
    assert (tmp_path / "cache" / "manifest.json").is_file()
    render = run_step("Render", parameters, timeout=600)
    assert render.returncode == 0, render.stdout[-3000:]
    assert [line.split(" = ")[-1] for line in render.stdout.splitlines() if "Frames(CHUNK[INT]) = " in line] == [
        "1-4", "5-8"]
    assert_farm_frames_match(tmp_path, "output")
