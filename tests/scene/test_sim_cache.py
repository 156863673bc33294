"""The simulation cache on disk: file format, manifest keys, scrubbing from it, refusals, frame ranges."""

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import bpy
import numpy as np
import pytest

from addon.engine.simulate import cache_format
from addon.engine.simulate.cache_format import CacheError
from tests.conftest import add_effect

ROOT = Path(__file__).resolve().parents[2]


# The file format (no GPU).

def test_checkpoint_file_round_trips_bit_for_bit(rng):
    arrays = [rng.standard_normal((4, 256, 4)).astype(np.float32), rng.standard_normal((4, 256, 4)).astype(np.float16),
              np.array([1.5, -2.0, 3.25], np.float32)]
    data = cache_format.encode(arrays, {"frame": 7})
    decoded, meta = cache_format.decode(data)
    assert meta == {"frame": 7}
    for a, b in zip(arrays, decoded):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("damage, message", [
    (lambda d: d[:-10], "truncated"),
    (lambda d: d[:40], "damaged header|truncated"),
    (lambda d: d[:-5] + bytes([d[-5] ^ 1]) + d[-4:], "corrupt"),
    (lambda d: b"PNG" + d[3:], "not a GPU Particles cache file"),
    (lambda d: d.replace(b'"format": 1', b'"format": 9'), "cache format 9; this add-on reads format 1"),
])
def test_damaged_files_are_refused_with_the_reason(damage, message):
    data = cache_format.encode([np.arange(4096, dtype=np.float32)], {"frame": 1})
    with pytest.raises(CacheError, match=message):
        cache_format.decode(damage(data))


def test_a_full_disk_leaves_the_old_file_and_no_partial(tmp_path, monkeypatch):
    path = tmp_path / "frame_000001.gpc"
    cache_format.write_atomic(path, b"old and complete")

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(cache_format.os, "fsync", full)
    with pytest.raises(CacheError, match="the disk is full; the cache written before is unchanged"):
        cache_format.write_atomic(path, b"new")
    assert path.read_bytes() == b"old and complete"
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


# The cache in Blender.

def cached_scene(scene, tmp_path, interval=2, **effect):
    add_effect(count=3000, **effect)
    scene.gpu_particles.cache_directory = str(tmp_path / "cache")
    scene.gpu_particles.cache_interval = interval
    return tmp_path / "cache"


def state_at(scene, frame, cache="READ"):
    from addon.scene.renderer import SceneRenderer

    renderer = SceneRenderer(scene, 16, 16, cache=cache)
    renderer.advance_to(frame)
    return renderer, renderer.simulation.systems[0].read_state()


def test_bake_fills_the_cache_and_a_fresh_renderer_scrubs_from_it(scene, tmp_path):
    folder = cached_scene(scene, tmp_path, turbulence_strength=2.0, preroll=0.5)
    assert bpy.ops.gpu_particles.bake() == {"FINISHED"}
    manifest = json.loads((folder / "manifest.json").read_text())
    assert sorted(manifest["frames"]) == ["1", "3"] and manifest["version"] and manifest["vendor"]
    renderer, cached = state_at(scene, 4)
    assert renderer.simulation.timeline.steps_run == 1, "restored frame 3 from disk, one step to 4"
    _, straight = state_at(scene, 4, cache="OFF")
    for a, b in zip(cached, straight):
        np.testing.assert_array_equal(a, b)
    from addon.ui.cache_panel import cache_status

    assert cache_status(scene) == "Cached frames 1-3 (2 checkpoint(s))"


def test_an_edit_invalidates_what_it_changes(scene, tmp_path):
    folder = cached_scene(scene, tmp_path)
    scene.frame_end = 6
    assert bpy.ops.gpu_particles.bake() == {"FINISHED"}
    emitter = bpy.context.active_object
    emitter.location.x = 0.5  # a new key at frame 5: frames from 5 on change, 1 and 3 stay
    emitter.keyframe_insert("location", frame=5)
    renderer, _ = state_at(scene, 6)
    store = renderer.simulation.timeline.store
    assert store.best(6) == 3 and store.best(2) == 1
    emitter.gpu_particles.active_effect.drag = 0.3  # a setting: the whole history changes
    renderer, _ = state_at(scene, 6)
    assert renderer.simulation.timeline.store.best(6) is None
    assert bpy.ops.gpu_particles.bake() == {"FINISHED"}  # rebaking replaces it
    assert json.loads((folder / "manifest.json").read_text())["frames"].keys() == {"1", "3", "5"}


def test_a_look_edit_keeps_the_cache(scene, tmp_path):
    """Colors, sprites and lighting are not in the history key (settings.LOOK_FIELDS): the baked checkpoints stand."""
    from addon.ui.cache_panel import cache_status

    cached_scene(scene, tmp_path)
    assert bpy.ops.gpu_particles.bake() == {"FINISHED"}
    effect = bpy.context.active_object.gpu_particles.active_effect
    effect.color_start, effect.particle_type, effect.lighting = (0.1, 0.2, 1.0), "SPRITE", "LIT"
    renderer, _ = state_at(scene, 4)
    assert renderer.simulation.timeline.steps_run == 1, "restored frame 3 from disk, one step to 4"
    assert cache_status(scene) == "Cached frames 1-3 (2 checkpoint(s))"


def test_another_version_or_a_corrupt_file_is_refused_not_used(scene, tmp_path):
    folder = cached_scene(scene, tmp_path)
    assert bpy.ops.gpu_particles.bake() == {"FINISHED"}
    checkpoint = next(folder.glob("*/frame_000003.gpc"))
    checkpoint.write_bytes(checkpoint.read_bytes()[:-100])
    with pytest.raises(RuntimeError, match="frame_000003.gpc' is truncated"):
        bpy.ops.gpu_particles.bake(frame_start=4)  # starts from the checkpoint at 3
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["version"] = "0.0.1"
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(RuntimeError, match="written by GPU Particles 0.0.1 .* Free it and bake again"):
        bpy.ops.gpu_particles.bake()
    from addon.scene.renderer import SceneRenderer

    assert "written by GPU Particles 0.0.1" in SceneRenderer(scene, 16, 16).warnings[-1], "the viewport says why"
    assert bpy.ops.gpu_particles.free_cache() == {"FINISHED"}
    assert list(folder.iterdir()) == []
    assert bpy.ops.gpu_particles.bake() == {"FINISHED"}


def test_a_full_disk_stops_the_bake_and_keeps_the_cache_before_it(scene, tmp_path, monkeypatch):
    folder = cached_scene(scene, tmp_path)
    real = cache_format.write_atomic

    def fill_up(path, data):
        if "frame_000003" in Path(path).name:
            raise CacheError(f"Could not write the simulation cache file '{path}': the disk is full; "
                             "the cache written before is unchanged")
        real(path, data)

    monkeypatch.setattr(cache_format, "write_atomic", fill_up)
    with pytest.raises(RuntimeError, match="Frame 3: .*the disk is full"):
        bpy.ops.gpu_particles.bake()
    monkeypatch.undo()
    assert json.loads((folder / "manifest.json").read_text())["frames"].keys() == {"1"}
    renderer, _ = state_at(scene, 2)
    assert renderer.simulation.timeline.store.best(2) == 1


def test_long_preroll_runs_in_pieces_can_stop_and_lands_in_the_cache(scene, tmp_path):
    from addon.output.bake import BakeJob
    from addon.scene.time import PREROLL_AT_ONCE, PREROLL_CHUNK

    steps = PREROLL_AT_ONCE + 12
    folder = cached_scene(scene, tmp_path, preroll=steps / 24)
    job = BakeJob(scene)
    assert job.step() is None and job.progress == pytest.approx(PREROLL_CHUNK / steps)
    job.close(cancelled=True)  # stopped inside the preroll: nothing written, nothing cached
    assert not (folder / "manifest.json").exists()
    job = BakeJob(scene)
    pieces = 0
    while job.step() is None:
        pieces += 1
    assert pieces == steps // PREROLL_CHUNK and job.done == 1
    job.close()
    assert "1" in json.loads((folder / "manifest.json").read_text())["frames"]
    job = BakeJob(scene)
    assert job.step() == 1, "the next bake starts from the cached preroll"
    job.close()


def cli(*args, preset="default", res="64x36", count=4000, shot="1-40"):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-m", "addon.cli", "bake", "--preset", preset, "--res", res,
                             "--count", str(count), "--shot", shot, *args], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr
    return result


def split_bake_equals_whole(tmp_path, last: int, **options) -> tuple[list, dict]:
    """Frames 1 to ``last`` baked whole, then in two halves, each in a fresh process, the second from the cache's
    checkpoints: every frame byte-identical.  The whole's frames and the second process's record."""
    middle = last // 2
    shot = {"shot": f"1-{last}", **options}
    cli("--frames", f"1-{last}", "--out", str(tmp_path / "whole"), **shot)
    cache = str(tmp_path / "cache")
    cli("--frames", f"1-{middle}", "--out", str(tmp_path / "split"), "--cache", cache, **shot)
    cli("--frames", f"{middle + 1}-{last}", "--out", str(tmp_path / "split"), "--cache", cache, **shot)
    whole, split = (sorted((tmp_path / name).glob("*.png")) for name in ("whole", "split"))
    assert len(whole) == len(split) == last
    for a, b in zip(whole, split):
        assert a.name == b.name and a.read_bytes() == b.read_bytes(), a.name
    return whole, json.loads((tmp_path / "split" / "gpu_particles_bake.json").read_text())


@pytest.mark.slow
def test_frame_ranges_from_checkpoints_in_fresh_processes_are_byte_identical(tmp_path):
    _, record = split_bake_equals_whole(tmp_path, 40)
    assert record["frames"] == [21, 40] and record["cache"]["loaded_checkpoints"] == [11], \
        "the second process started from the checkpoint at 11, not from frame 1"


@pytest.fixture
def small_disk(tmp_path):
    """A 768 KB tmpfs (needs root; skipped where mounting is not allowed)."""
    mount = tmp_path / "small_disk"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=768k", "tmpfs", str(mount)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")
    yield mount
    subprocess.run(["umount", str(mount)], check=True)


@pytest.mark.slow
def test_a_real_full_disk_stops_the_bake_and_keeps_the_cache_before_it(scene, tmp_path, small_disk):
    add_effect(count=20_000, turbulence_strength=2.0)
    scene.frame_end = 12
    scene.gpu_particles.cache_directory = str(small_disk / "cache")
    scene.gpu_particles.cache_every_frame = True
    with pytest.raises(RuntimeError, match="Frame [0-9]+: Could not write the simulation cache file .*: "
                                           "the disk is full; the cache written before is unchanged"):
        bpy.ops.gpu_particles.bake()
    assert not [p for p in small_disk.rglob("*") if ".partial" in p.name], "no half-written checkpoint"
    kept = sorted(int(f) for f in json.loads((small_disk / "cache" / "manifest.json").read_text())["frames"])
    assert kept == list(range(1, len(kept) + 1)) and 1 <= len(kept) < 12
    renderer, cached = state_at(scene, kept[-1])
    assert renderer.simulation.timeline.loaded == [kept[-1]], "every checkpoint the manifest lists still loads"
    _, straight = state_at(scene, kept[-1], cache="OFF")
    for a, b in zip(cached, straight):
        np.testing.assert_array_equal(a, b)
