"""The ``export`` suite (bench/blender_gpu.py --suites export): files a bake writes beside its frames (output/extras.py).

``points-1M``: point-cache frames (PLY, output/point_cache.py) of the default preset with 1M particle slots,
baked at a thumbnail size so the image costs next to nothing: ``fps``, frames with their point cache on disk a
second (the writer threads' last files inside the time; goal >= 30 on the GPU machine), and where the time goes:
``capture_ms`` (the main thread's: the GPU compacting and packing the records, engine/look/point_records.py, and
the body's readback), per frame on one thread ``encode_ms`` (the header: the body is the readback) and
``disk_ms`` (writing the file),
``mb_per_frame`` and ``live`` (particles a frame, mean); ``peer_fps``: the same bake without point caches.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.bake_throughput import effect_scene
from bench.counting import timed_passes
from bench.vdb_export import vdb_smoke

POINTS_CASE = (1_000_000, 64, 36)  # particle slots, frame size (a thumbnail: the point caches are measured)


def _bake(count: int, width: int, height: int, frames: int, points: bool) -> tuple[float, dict, Path, object]:
    """(frames a second after a warm-up frame, ms a frame per stage, the folder, the scene) of one bake."""
    from addon.output.bake import BakeJob

    out_dir = Path(tempfile.mkdtemp(prefix="gpu_particles_export_"))
    scene = effect_scene("default", count, width, height, (1, frames + 1), out_dir)
    scene.gpu_particles_output.write_points = points
    job = BakeJob(scene)
    job.step()
    job.clock.reset()
    started = time.perf_counter()
    while not job.finished:
        job.step()
    seconds = time.perf_counter() - started  # the last step waited for every file
    job.close()
    assert len(job.written) == frames + 1, f"{len(job.written)} of {frames + 1} frames written"
    stages = {f"{stage} ms": round(value / frames * 1e3, 2) for stage, value in job.clock.seconds.items()}
    return frames / seconds, stages, out_dir, scene


def _one_thread_split(scene, out_dir: Path, frame: int) -> tuple[float, float, float, dict]:
    """(capture, encode, disk) ms of one frame's point cache on this thread alone: the GPU's packing and the
    body's readback, the header, the file; and the capture's passes one by one (ms by pass, the GPU waited for
    after each: bench/counting.timed_passes)."""
    from addon.output.point_cache import PLY_DTYPE, capture, ply_header, write_ply
    from addon.scene.renderer import SceneRenderer

    renderer = SceneRenderer(scene, 1, 1)
    renderer.advance_to(frame)
    renderer.update_ramps()
    capture(renderer, frame)  # the first: makes the slot draws' images, compiles the kernels
    with timed_passes(renderer.host) as passes:
        for system in renderer.simulation.systems:
            system.state_changed()  # compacted again, as after a step
        capture(renderer, frame)
    started = time.perf_counter()
    bodies = capture(renderer, frame)
    captured_at = time.perf_counter()
    ply_header(sum(body.records.nbytes for body in bodies) // PLY_DTYPE.itemsize)
    encoded = time.perf_counter()
    write_ply(out_dir / "one_thread.ply", [body.records for body in bodies])
    written = time.perf_counter()
    return ((captured_at - started) * 1e3, (encoded - captured_at) * 1e3, (written - encoded) * 1e3,
            {name: round(ms, 2) for name, ms in passes.items()})


def points_case(quick: bool, frames: int) -> dict:
    from addon.output.point_cache import read_ply

    count, width, height = POINTS_CASE
    count = count // 100 if quick else count
    fps, stages, out_dir, scene = _bake(count, width, height, frames, points=True)
    try:
        files = sorted((out_dir / "points").glob("*.ply"))
        live = [len(read_ply(path)) for path in files]
        capture_ms, encode_ms, disk_ms, passes_ms = _one_thread_split(scene, out_dir, frames + 1)
        result = {"case": f"points-{count // 1000}K" if count < 1_000_000 else f"points-{count // 1_000_000}M",
                  "fps": round(fps, 2), "n": count, "width": width, "height": height, "frames": frames,
                  "live": int(np.mean(live)), "mb_per_frame": round(np.mean([p.stat().st_size for p in files]) / 2**20, 2),
                  "capture_ms": round(capture_ms, 2), "encode_ms": round(encode_ms, 2), "disk_ms": round(disk_ms, 2),
                  "passes_ms": passes_ms, **stages}
    finally:
        _reset(out_dir)
    peer_fps, _, peer_dir, _ = _bake(count, width, height, frames, points=False)
    _reset(peer_dir)
    result["peer_fps"] = round(peer_fps, 2)
    return result


def _reset(out_dir: Path) -> None:
    """The add-on off and an empty file again (as measure_bake leaves it), the bake's files removed."""
    import bpy

    import addon

    addon.unregister()
    bpy.ops.wm.read_factory_settings(use_empty=True)
    shutil.rmtree(out_dir, ignore_errors=True)


# name: (quick, frames) -> record row; more kinds join here
CASES = {"points-1M": points_case, "vdb-smoke": lambda quick, frames: vdb_smoke(quick, frames, 2 if quick else 6)}


def export_suite(quick: bool, frames: int) -> list[dict]:
    return [case(quick, frames) for case in CASES.values()]
