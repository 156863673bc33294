"""The simulation's own frame range (Simulation Start and End), apart from the scene's render range.

A farm renders a shot in chunks by changing the scene's range (``blender -b shot.blend -s 29 -e 30 -a``):
each chunk must give the frames the whole shot gives, so the simulation starts where it was set, not at the
chunk's first frame.  Also here: a .blend never saved, the bake's size and what the cache panel says.
"""

import json

import bpy
import numpy as np
import pytest

from addon.ui.cache_panel import GPU_PARTICLES_PT_cache, cache_status
from tests.conftest import add_effect
from tests.scene.test_sim_cache import cached_scene, state_at
from tests.ui.test_panels import draw

SHOT = 30


def bake_to(scene, folder, frames=None) -> dict:
    """Bake ``frames`` (first, last; default the scene's range) into ``folder``: {frame: PNG bytes}."""
    scene.gpu_particles_output.bake_path = str(folder / "f_####")
    assert bpy.ops.gpu_particles.bake(**({"frame_start": frames[0], "frame_end": frames[1]} if frames else {})) \
        == {"FINISHED"}
    return {int(p.stem[2:]): p.read_bytes() for p in folder.glob("f_*.png")}


def test_a_new_effect_fixes_the_range_at_the_scenes(scene):
    settings = scene.gpu_particles
    scene.frame_start, scene.frame_end = 5, 40
    assert (settings.simulation_start, settings.simulation_end) == (5, 40), "unset: the scene's range"
    add_effect()
    scene.frame_start, scene.frame_end = 29, 30  # a farm's chunk
    assert (settings.simulation_start, settings.simulation_end) == (5, 40)
    add_effect()  # a later effect keeps it
    assert (settings.simulation_start, settings.simulation_end) == (5, 40)
    settings.simulation_start = 2
    assert (settings.simulation_start, settings.simulation_end) == (2, 40)


def test_the_cache_panel_shows_the_range_and_what_the_cache_can_give(scene, tmp_path):
    cached_scene(scene, tmp_path)
    log = draw(GPU_PARTICLES_PT_cache)
    props = [name for kind, owner, *rest in log if kind == "prop" for name in rest]
    assert props[:3] == ["simulation_start", "simulation_end", "cache_directory"]
    assert log[-1] == ("label", "Not cached")


def test_a_chunk_of_the_shot_bakes_the_shots_frames(scene, tmp_path):
    add_effect(count=3000, turbulence_strength=1.0)
    scene.frame_end = SHOT
    scene.gpu_particles.simulation_end = SHOT
    scene.gpu_particles.use_disk_cache = False
    whole = bake_to(scene, tmp_path / "whole")
    assert sorted(whole) == list(range(1, SHOT + 1))
    scene.frame_start, scene.frame_end = SHOT - 1, SHOT  # as `-s 29 -e 30` sets it
    chunk = bake_to(scene, tmp_path / "chunk")
    assert sorted(chunk) == [SHOT - 1, SHOT]
    for frame, png in chunk.items():
        assert png == whole[frame], f"frame {frame} differs from the whole shot's"


def test_a_chunk_starts_from_the_caches_checkpoint_and_matches(scene, tmp_path):
    cached_scene(scene, tmp_path, turbulence_strength=1.0)
    scene.frame_end = scene.gpu_particles.simulation_end = 8
    assert bpy.ops.gpu_particles.bake_simulation() == {"FINISHED"}
    scene.gpu_particles.use_disk_cache = False
    whole = bake_to(scene, tmp_path / "whole")
    scene.gpu_particles.use_disk_cache = True
    scene.frame_start, scene.frame_end = 7, 8
    chunk = bake_to(scene, tmp_path / "chunk")
    record = json.loads((tmp_path / "chunk" / "gpu_particles_bake.json").read_text())
    assert record["cache"]["loaded_checkpoints"] == [7], "started from the checkpoint at 7, not from 1"
    assert chunk == {7: whole[7], 8: whole[8]}


def test_frames_before_the_start_show_the_start(scene):
    add_effect(count=3000)
    scene.gpu_particles.simulation_start = 3
    renderer, at_start = state_at(scene, 3, cache="OFF")
    for frame in (1, 2):
        renderer.advance_to(frame)
        for a, b in zip(renderer.simulation.systems[0].read_state(), at_start):
            np.testing.assert_array_equal(a, b)
    renderer.advance_to(4)
    assert renderer.simulation.timeline.frame == 4


def test_bake_simulation_fills_its_own_range(scene, tmp_path):
    folder = cached_scene(scene, tmp_path)
    scene.frame_start, scene.frame_end = 3, 4  # the render range: not what is cached
    scene.gpu_particles.simulation_end = 6
    assert bpy.ops.gpu_particles.bake_simulation() == {"FINISHED"}
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["start_frame"] == 1 and sorted(map(int, manifest["frames"])) == [1, 3, 5]
    scene.gpu_particles.simulation_end = 0
    with pytest.raises(RuntimeError, match="The simulation range runs backwards: 1 to 0"):
        bpy.ops.gpu_particles.bake_simulation()


def test_a_changed_start_or_setting_makes_the_cache_stale(scene, tmp_path):
    cached_scene(scene, tmp_path)
    assert bpy.ops.gpu_particles.bake_simulation() == {"FINISHED"}
    assert cache_status(scene) == "Cached frames 1-3 (2 checkpoint(s))"
    scene.gpu_particles.simulation_start = 2
    assert cache_status(scene) == "Stale after an edit: frames 1-3 (2 checkpoint(s)) no longer apply " \
                                  "(Bake Simulation again)"
    renderer, _ = state_at(scene, 4)
    assert renderer.simulation.timeline.store.best(4) is None and renderer.simulation.timeline.loaded == []
    scene.gpu_particles.simulation_start = 1
    assert cache_status(scene) == "Cached frames 1-3 (2 checkpoint(s))"
    bpy.context.active_object.gpu_particles.active_effect.drag = 0.3
    assert cache_status(scene).startswith("Stale after an edit")
    assert state_at(scene, 4)[0].simulation.timeline.store.best(4) is None, "the bake agrees: nothing applies"
    assert bpy.ops.gpu_particles.bake_simulation() == {"FINISHED"}
    assert cache_status(scene) == "Cached frames 1-3 (2 checkpoint(s))"


def test_a_file_from_before_the_range_keeps_its_saved_start_on_load(scene, tmp_path):
    add_effect()
    settings = scene.gpu_particles
    del settings["_simulation_start"], settings["_simulation_end"]  # as a file saved before the setting
    scene.frame_start, scene.frame_end = 2, 9
    path = tmp_path / "old.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.open_mainfile(filepath=str(path), load_ui=False)
    loaded = bpy.context.scene
    loaded.frame_start, loaded.frame_end = 8, 9  # what `-s 8 -e 9` does after loading
    assert (loaded.gpu_particles.simulation_start, loaded.gpu_particles.simulation_end) == (2, 9)


def test_a_never_saved_file_bake_says_save_first_and_its_layer_goes_to_the_temporary_folder(scene):
    from addon.output.render_layer import layer_files

    assert not bpy.data.filepath
    add_effect()
    scene.gpu_particles_output.bake_path = "//particles/f_####"
    with pytest.raises(RuntimeError, match="Bake Output: Save the .blend first: '//particles/f_####' is relative "
                                           "to its folder"):
        bpy.ops.gpu_particles.bake()
    with pytest.raises(RuntimeError, match="Save the .blend first"):
        bpy.ops.gpu_particles.bake_simulation()
    scene.gpu_particles_output.layer_path = "//particles/layer/"
    light, depth = layer_files(scene, 7)
    assert str(light).startswith(bpy.app.tempdir) and light.name == "light_0007.exr"


@pytest.mark.parametrize("size, percent, expected", [((240, 135), 50, (120, 67)), ((100, 100), 29, (29, 29))])
def test_the_bake_is_the_renders_size(scene, host, size, percent, expected):
    from addon.output.bake import plan_bake

    add_effect()
    scene.render.resolution_x, scene.render.resolution_y = size
    scene.render.resolution_percentage = percent
    plan = plan_bake(scene, host)
    assert (plan.width, plan.height) == expected
