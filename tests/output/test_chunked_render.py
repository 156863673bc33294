"""A farm's chunk of a plain Render Animation (``blender -b shot.blend -s 29 -e 30 -a``) renders the frames the
whole shot renders: the particle layer simulates from the simulation's own start, not the chunk's first frame.

Rendered headless with Workbench through ``bpy.ops.render.render(animation=True)`` (its own process: see
conftest.OWN_PROCESS_FILES).
"""

import bpy
import numpy as np
import pytest

from addon.output.render_layer import frame_file
from tests.conftest import add_effect

SHOT = 30


def pixels(path) -> bytes:
    """The PNG's pixels (its metadata holds the render time, which differs between runs)."""
    image = bpy.data.images.load(str(path), check_existing=False)
    try:
        return np.array(image.pixels[:], np.float32).tobytes()
    finally:
        bpy.data.images.remove(image)


def render_animation(scene, folder) -> dict:
    """Render Animation of the scene's range into ``folder``: {frame: its pixels}."""
    scene.render.filepath = str(folder / "f_####")
    assert bpy.ops.render.render(animation=True) == {"FINISHED"}
    return {frame: pixels(frame_file(scene.render.filepath, frame, ".png"))
            for frame in range(scene.frame_start, scene.frame_end + 1)}


@pytest.mark.slow
def test_a_chunk_of_render_animation_renders_the_shots_frames(scene, tmp_path):
    add_effect(count=3000, turbulence_strength=1.0)
    scene.frame_end = scene.gpu_particles.simulation_end = SHOT
    scene.gpu_particles.use_disk_cache = False
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.render.image_settings.file_format = "PNG"
    whole = render_animation(scene, tmp_path / "whole")
    scene.frame_start, scene.frame_end = SHOT - 1, SHOT  # as `-s 29 -e 30` sets it
    chunk = render_animation(scene, tmp_path / "chunk")
    assert chunk == {SHOT - 1: whole[SHOT - 1], SHOT: whole[SHOT]}
    scene.gpu_particles.simulation_start = SHOT - 1  # the same chunk simulated from 29 differs: the test sees it
    assert render_animation(scene, tmp_path / "from_29")[SHOT] != whole[SHOT]
