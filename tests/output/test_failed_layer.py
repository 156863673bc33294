"""A layer that fails in a fresh process (a farm worker opening the .blend) passes the render through untouched.

The shot's sprite image is ``//tex/spark.png`` and ``tex/`` is gone.  No layer has succeeded in the worker, so
the compositor's layer images were never filled: 1x1, they made every frame's alpha 0 (the compositor lays an
image of another size centred, with nothing around it).  Each render runs in a child process of its own, as a
farm's does; the frames must be the plain render's bytes, RGB and alpha.
"""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import bpy
import numpy as np
import pytest

from tests.conftest import add_effect

ROOT = Path(__file__).resolve().parents[2]
SPRITE = "//tex/spark.png"

CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
import bpy, gpu
gpu.init()
import addon
from addon.output import render_integration

addon.register()
bpy.ops.wm.open_mainfile(filepath=sys.argv[2])
scene, how = bpy.context.scene, sys.argv[4]
scene.render.filepath = sys.argv[3]
if how == "plain":  # the add-on's effects off: Blender's own render
    for obj in scene.objects:
        for effect in obj.gpu_particles.effects:
            effect.enabled = False
if how == "still":  # F12 of frame 2 (a still's path is taken as is: its frame put in by hand)
    scene.frame_set(2)
    scene.render.filepath = scene.render.frame_path(frame=2)
    result = bpy.ops.render.render(write_still=True)
else:  # Render Animation, as `blender -b shot.blend -a` on a farm worker
    result = bpy.ops.render.render(animation=True)
print("RESULT", json.dumps({"result": sorted(result), "errors": render_integration.last_errors.get(scene.name, [])}))
"""


def save_shot_without_its_sprite(tmp_path) -> Path:
    """An opaque Workbench shot, frames 1-3 as RGBA PNG, whose Alpha effect draws ``//tex/spark.png``, saved; then
    ``tex/`` is removed."""
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 3
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.render.image_settings.file_format, scene.render.image_settings.color_mode = "PNG", "RGBA"
    scene.world = bpy.data.worlds.new("Opaque")
    scene.world.color = (0.2, 0.3, 0.4)
    (tmp_path / "tex").mkdir()
    spark = bpy.data.images.new("spark", 8, 8, alpha=True)
    spark.pixels.foreach_set(np.ones(8 * 8 * 4, np.float32))
    spark.filepath_raw, spark.file_format = str(tmp_path / "tex" / "spark.png"), "PNG"
    spark.save()
    bpy.data.images.remove(spark)
    add_effect(count=3000, blend_mode="ALPHA", sprite_image=SPRITE)
    blendfile = tmp_path / "shot.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blendfile), copy=True)
    shutil.rmtree(tmp_path / "tex")
    return blendfile


def render_in_a_fresh_process(blendfile: Path, folder: Path, how: str) -> dict:
    """Render the saved shot in a child process (``how``: animation, still or plain): its report."""
    child = subprocess.run([sys.executable, "-X", "faulthandler", "-c", CHILD, str(ROOT), str(blendfile),
                            str(folder / "f_####"), how], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert child.returncode == 0, f"rc {child.returncode}\n{child.stdout[-3000:]}\n{child.stderr[-3000:]}"
    line = next(line for line in child.stdout.splitlines() if line.startswith("RESULT "))
    return json.loads(line.removeprefix("RESULT "))


def frame(folder: Path, number: int) -> np.ndarray:
    """The written frame's pixels, RGBA, as the file holds them."""
    image = bpy.data.images.load(str(folder / f"f_{number:04d}.png"), check_existing=False)
    try:
        assert image.channels == 4, "written as RGBA"
        return np.array(image.pixels[:], np.float32).reshape(*image.size[::-1], 4)
    finally:
        bpy.data.images.remove(image)


def test_a_failed_layer_in_a_fresh_process_leaves_every_frame_as_blender_rendered_it(scene, tmp_path):
    blendfile = save_shot_without_its_sprite(tmp_path)
    plain = render_in_a_fresh_process(blendfile, tmp_path / "plain", "plain")
    assert plain == {"result": ["FINISHED"], "errors": []}
    failed = render_in_a_fresh_process(blendfile, tmp_path / "failed", "animation")
    assert failed["result"] == ["FINISHED"] and len(failed["errors"]) == 3, failed
    for number, error in zip((1, 2, 3), failed["errors"]):
        assert f"frame {number}" in error and "Effect 'Spark Fountain' on 'Emitter'" in error and SPRITE in error
        expected = frame(tmp_path / "plain", number)
        np.testing.assert_array_equal(expected[..., 3], 1.0, "an opaque background: the plain render's alpha")
        np.testing.assert_array_equal(frame(tmp_path / "failed", number), expected)


def test_a_failed_layer_on_f12_in_a_fresh_process_leaves_the_still_as_blender_rendered_it(scene, tmp_path):
    blendfile = save_shot_without_its_sprite(tmp_path)
    plain = render_in_a_fresh_process(blendfile, tmp_path / "plain", "plain")
    still = render_in_a_fresh_process(blendfile, tmp_path / "still", "still")
    assert still["result"] == ["FINISHED"] and len(still["errors"]) == 1 and SPRITE in still["errors"][0], still
    assert plain["errors"] == []
    np.testing.assert_array_equal(frame(tmp_path / "still", 2), frame(tmp_path / "plain", 2))


def test_a_layer_and_a_bake_name_the_effect_whose_sprite_image_is_missing(scene, host):
    from addon.engine.settings.settings import SettingsError
    from addon.output.bake import BakeError, plan_bake
    from addon.output.render_layer import ParticleLayer

    add_effect(count=3000)
    add_effect(count=3000, blend_mode="ALPHA", sprite_image="/no/such/spark.png").name = "Sparks"
    named = "Effect 'Sparks' on 'Emitter': sprite image '/no/such/spark.png'"
    with pytest.raises(SettingsError, match=re.escape(named)):
        ParticleLayer(scene)
    with pytest.raises(BakeError, match=re.escape(named)):
        plan_bake(scene, host)
