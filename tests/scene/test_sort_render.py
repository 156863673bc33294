"""Sorting and the Alpha mode in the scene renderer, the settings that drive them, bad input."""

import numpy as np
import pytest

from addon.engine.order.sorting import KEY_DEPTH, KEY_GRID, SortKey, is_camera_cut, sort_key_for
from addon.engine.primitives.sort_schedule import MAX_SORT_PASSES
from addon.engine.reference.order import sorting as ref
from addon.engine.seam.records import PARTICLE
from addon.engine.settings.settings import SettingsError, effect_settings
from tests.conftest import add_effect


def test_sort_settings_are_bounded():
    for bad in (-1, MAX_SORT_PASSES + 1, 10**9, 2.5):
        with pytest.raises(SettingsError, match="sort_passes"):
            effect_settings({"sort_passes": bad})
    with pytest.raises(SettingsError, match="blend_mode"):
        effect_settings({"blend_mode": "MULTIPLY"})
    with pytest.raises(SettingsError, match="sort_cell_size"):
        effect_settings({"sort_cell_size": 0.0})
    assert effect_settings({"sort_passes": 0}).sort_passes == 0


def test_sort_key_follows_the_settings():
    view = np.identity(4)
    assert sort_key_for(effect_settings({}), view) is None  # Add mode sorts nothing by default
    assert sort_key_for(effect_settings({"blend_mode": "ALPHA"}), view) is None  # sprites.py orders per pixel
    assert sort_key_for(effect_settings({"sort_order": "BACK_TO_FRONT"}), view).mode == KEY_DEPTH
    assert sort_key_for(effect_settings({"blend_mode": "ALPHA", "sort_order": "NONE"}), view) is None
    grid = sort_key_for(effect_settings({"sort_order": "GRID_CELL", "sort_cell_size": 0.5}), view)
    assert grid.mode == KEY_GRID and grid.grid[3] == 0.5


def test_camera_cuts():
    turn = np.identity(4)
    angle = np.radians(10)
    turn[:3, :3] = [[np.cos(angle), 0, np.sin(angle)], [0, 1, 0], [-np.sin(angle), 0, np.cos(angle)]]
    assert not is_camera_cut(np.identity(4), turn)
    assert is_camera_cut(np.identity(4), np.diag([1.0, -1.0, -1.0, 1.0]))


def render_frames(scene, frames, exact_sort=False):
    from addon.scene.renderer import SceneRenderer

    renderer = SceneRenderer(scene, 64, 36, exact_sort=exact_sort)
    return renderer, [renderer.render(f) for f in frames]


def test_alpha_effect_renders_sorted_sprites(scene):
    add_effect(count=3000, blend_mode="ALPHA", opacity=0.7, size=0.05, sort_passes=4, sort_order="BACK_TO_FRONT")
    renderer, frames = render_frames(scene, (1, 2, 3, 4))
    assert renderer.sprites is not None
    assert (frames[-1][..., 3] > 0).any(), "sprites show"
    assert renderer.simulation.sorts[0].sorter.method == "KEY_INDEX"
    adjacent, tau = renderer.stats()["sortedness"][0]
    assert 0.0 <= adjacent <= 1.0 and -1.0 <= tau <= 1.0
    # Back to front: going back to frame 1 is a jump, so a full sort; the drawing order's keys never decrease.
    renderer.render(1)
    assert renderer.stats()["sortedness"][0] == (1.0, 1.0)
    order = renderer.host.read(renderer.simulation.sorts[0].indices).ravel()[:3000]
    pos_age, vel_life = renderer.simulation.systems[0].read_state()  # world positions
    particle = PARTICLE.read_images(pos_age, vel_life)
    view = np.array(scene.camera.matrix_world.inverted())
    emitter = np.array(scene.objects["Emitter"].matrix_world)[:3, 3]
    keys = ref.particle_keys(pos_age, vel_life, SortKey.view_depth(view, emitter))
    assert np.all(np.diff(keys[order].astype(np.int64)) >= 0)
    waiting = (particle["life"] == 0) & (particle["age"] < 0)
    assert waiting.any() and (keys[waiting] < 0xFFFFFFFF).all(), "waiting particles are keyed at the emitter"


def test_bake_sorts_exactly_every_frame(scene):
    add_effect(count=2000, blend_mode="ALPHA", sort_passes=0, sort_order="BACK_TO_FRONT")
    renderer, _ = render_frames(scene, (1, 2, 3), exact_sort=True)
    assert renderer.stats()["sortedness"][0] == (1.0, 1.0)


def test_grid_cell_order_moves_the_state_and_keeps_additive_frames(scene):
    add_effect(count=2000, sort_order="GRID_CELL", sort_cell_size=0.05, sort_passes=8)
    renderer, frames = render_frames(scene, (1, 2, 3))
    assert renderer.simulation.sorts[0].sorter.method == "DIRECT"
    assert renderer.sprites is None
    assert renderer.stats()["sortedness"][0][0] > 0.5
    # The same particles as an unsorted run: the additive frame does not depend on slot order.
    from addon.scene.renderer import SceneRenderer

    scene.objects["Emitter"].gpu_particles.active_effect.sort_order = "NONE"
    plain = SceneRenderer(scene, 64, 36)
    np.testing.assert_allclose(frames[0], plain.render(1), atol=1e-6)


def test_one_particle_sorts(scene):
    add_effect(count=1, blend_mode="ALPHA", sort_order="BACK_TO_FRONT")
    renderer, _ = render_frames(scene, (1, 2))
    assert renderer.stats()["sortedness"][0] == (1.0, 1.0)


def test_passes_covering_the_schedule_run_the_full_sort(scene, monkeypatch):
    from addon.engine.order import sorting

    calls = []
    monkeypatch.setattr(sorting.ParticleSorter, "full", lambda self, key: calls.append("full"))
    monkeypatch.setattr(sorting.ParticleSorter, "incremental", lambda self, key, n: calls.append(n))
    add_effect(count=300, blend_mode="ALPHA", sort_passes=45, sort_order="BACK_TO_FRONT")  # 300 keys: a 45-pass schedule
    render_frames(scene, (1, 2, 3))
    assert calls == ["full"] * 3
    scene.objects["Emitter"].gpu_particles.active_effect.sort_passes = 44
    calls.clear()
    render_frames(scene, (1, 2, 3))
    assert calls == ["full", 44, 44]


def test_grid_cell_order_replays_identically_after_scrubbing(scene):
    """Grid-cell sorting moves particles between slots inside the simulation step, so a replay
    from a checkpoint (the timeline) gives the same frames as the first pass."""
    add_effect(count=3000, sort_order="GRID_CELL", sort_cell_size=0.1, sort_passes=5, color_random=0.5,
               lifetime=0.3)
    from addon.scene.renderer import SceneRenderer

    renderer = SceneRenderer(scene, 64, 36)
    first = {f: renderer.render(f) for f in range(1, 15)}
    for f in (13, 4, 7, 12):  # back (restores a checkpoint and replays), then forward
        np.testing.assert_array_equal(renderer.render(f), first[f], err_msg=f"frame {f}")


def test_alpha_bake_writes_sorted_frames_and_sortedness(scene, tmp_path):
    """The bake operator with an Alpha effect: exact sorts, frames with sprites, stats in the sidecar."""
    import json

    import bpy

    add_effect(count=5000, blend_mode="ALPHA", opacity=0.8, size=0.03, sort_order="BACK_TO_FRONT")
    scene.frame_end = 2
    assert bpy.ops.gpu_particles.bake() == {"FINISHED"}
    folder = tmp_path / "frames"
    image = bpy.data.images.load(str(folder / "f_0002.png"))
    assert np.array(image.pixels[:]).reshape(36, 64, 4)[..., :3].max() > 0.05, "sprites are visible"
    record = json.loads((folder / "gpu_particles_bake.json").read_text())
    assert record["last_frame"]["sortedness"] == [[1.0, 1.0]]
