"""F12 and Render Animation follow render visibility, as the bake does (tests/scene/test_visibility.py): an occluder hidden
in the viewport still hides particles, an emitter the render does not see draws none, a scene rendered while
another is active keeps its occluders.  Rendered through Blender's pipeline: a process of its own (conftest)."""

import bpy
import numpy as np
import pytest

from addon.output.render_layer import layer_files
from tests.conftest import add_effect
from tests.output.test_render_integration import lit, plain_render, read_exr
from tests.scene.test_occlusion import add_cube
from tests.scene.test_visibility import (
    collection_disabled_in_renders,
    collection_excluded,
    disable_in_renders,
    disable_in_viewports,
    hide_in_viewport,
)

W, H = 64, 36


@pytest.fixture
def effect_and_cube(scene, tmp_path):
    """An effect, a cube over the right half of the view between camera and emitter, Workbench, layer files."""
    add_effect(count=20_000)
    emitter = bpy.context.active_object
    cube = add_cube((2.5, -6.0, 1.5), 5.0)
    bpy.context.view_layer.objects.active = emitter
    bpy.context.view_layer.update()  # the cube evaluated where it is (Blender skips one disabled in viewports)
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.gpu_particles_output.layer_path = str(tmp_path / "layer") + "/"
    scene.gpu_particles_output.write_layer_files = True  # the layer each frame was composited with
    return emitter, cube


def layer_halves(scene, frame):
    """Lit pixels of ``frame``'s particle layer (the splat's light, before the compositor's depth test) in the left
    and the right half of the view."""
    light = read_exr(layer_files(scene, frame)[0])[..., :3].max(axis=-1) > 0
    return int(light[:, : W // 2].sum()), int(light[:, W // 2:].sum())


@pytest.mark.parametrize("hide", [hide_in_viewport, disable_in_viewports])
def test_an_occluder_hidden_in_the_viewport_still_hides_particles_in_f12(effect_and_cube, scene, tmp_path, hide):
    _, cube = effect_and_cube
    hide(cube)
    bpy.context.view_layer.update()
    result, plain = plain_render(scene, tmp_path / "f", 2)
    left, right = layer_halves(scene, 2)
    assert left > 50 and right == 0, "the particles behind the cube are hidden in the layer itself"
    cube_pixels = plain[..., 3] > 0.9
    assert cube_pixels[:, W // 2:].mean() > 0.9, "the cube renders"
    np.testing.assert_array_equal(result[cube_pixels], plain[cube_pixels])


@pytest.mark.parametrize("change", [disable_in_renders, collection_disabled_in_renders, collection_excluded])
def test_an_emitter_the_render_does_not_see_draws_nothing_in_a_render_animation(scene, tmp_path, change):
    add_effect(count=20_000)
    emitter = bpy.context.active_object
    scene.render.engine = "BLENDER_WORKBENCH"
    assert lit(*plain_render(scene, tmp_path / "shown", 2)) > 50
    change(emitter)
    bpy.context.view_layer.update()
    scene.frame_start, scene.frame_end = 1, 2
    scene.render.film_transparent = True  # no world behind the empty: only particles could light a pixel
    scene.render.image_settings.file_format = "OPEN_EXR"
    scene.render.filepath = str(tmp_path / "anim" / "f_####")
    assert bpy.ops.render.render(animation=True) == {"FINISHED"}
    for frame in (1, 2):
        assert not read_exr(tmp_path / "anim" / f"f_{frame:04d}.exr")[..., :3].any(), "nothing over the empty film"
    result, plain = plain_render(scene, tmp_path / "hidden", 2)
    np.testing.assert_array_equal(result, plain)


def test_a_scene_rendered_while_another_is_active_keeps_its_occluders(effect_and_cube, scene, tmp_path):
    bpy.ops.scene.new(type="EMPTY")
    assert bpy.context.scene != scene
    bpy.context.scene.frame_set(2)  # Blender renders another scene at the active scene's frame
    plain_render(scene, tmp_path / "f", 2)
    left, right = layer_halves(scene, 2)
    assert left > 50 and right == 0
