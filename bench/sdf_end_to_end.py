"""Suite ``sdf``, case ``end-to-end-1M-100k``: particles pouring onto a dense mesh with Collision physics.

Blender's own particle system (``count`` particles from an icosphere above, Newtonian, colliding with the
mesh: Blender's collision modifier) stepped by ``scene.frame_set``, against our bake of the same effect
(the "Sand onto Monkey" preset, its monkey an SDF collider) writing PNG frames, both in this run, each on
the same mesh: Suzanne subdivided 4 times (252K triangles) then decimated to ``--triangles``.  Both time
the frames after the first (Blender's point cache and our shader compiles warm up there).

    .venv/bin/python bench/sdf_end_to_end.py                     # 1M particles, 100K triangles, 24 frames
    .venv/bin/python bench/sdf_end_to_end.py --count 20000 --triangles 4000 --frames 4 --res 480x270 --out /tmp/sdf
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import records  # noqa: E402

PRESET = "sand_monkey"


SUBDIVIDED_TRIANGLES = 251_904  # Suzanne's after 4 subdivision levels


def add_colliders(preset, triangles: int) -> int:
    """The preset's colliders, its monkey of about ``triangles`` triangles; how many it has."""
    import bpy

    from addon.scene.stage_colliders import add_stage_colliders

    stage = [{**c, "subdivisions": 4} if c["primitive"] == "monkey" else c for c in preset.stage["colliders"]]
    monkey = add_stage_colliders(stage)[0]
    decimate = monkey.modifiers.new("Decimate", "DECIMATE")
    decimate.ratio = min(1.0, triangles / SUBDIVIDED_TRIANGLES)
    # The subdivided, decimated mesh becomes the object's own: a Collision modifier makes Blender evaluate
    # the object again at every frame, and a 4-level subdivision plus a decimation there (about a second)
    # would hide both sides' collision cost.
    mesh = bpy.data.meshes.new_from_object(monkey.evaluated_get(bpy.context.evaluated_depsgraph_get()))
    for modifier in [m for m in monkey.modifiers if m.type != "COLLISION"]:
        monkey.modifiers.remove(modifier)
    monkey.data = mesh
    mesh.calc_loop_triangles()
    return len(mesh.loop_triangles)


def label(n: int) -> str:
    return f"{n / 1e6:g}M" if n >= 1_000_000 else f"{round(n / 1000)}k"


def peer_ms_per_frame(preset, count: int, frames: int, triangles: int, out_dir: Path) -> tuple[float, int]:
    """Blender's particles colliding with the mesh: ms per ``frame_set`` after the first, and its triangles."""
    import bpy
    from blender_way import particle_scene

    import addon

    scene, _ = particle_scene(preset, count, 64, 64, frames, out_dir)
    addon.register()
    triangles = add_colliders(preset, triangles)
    times = []
    for frame in range(1, frames + 2):
        start = time.perf_counter()
        scene.frame_set(frame)
        times.append((time.perf_counter() - start) * 1e3)
    addon.unregister()
    bpy.ops.wm.read_factory_settings(use_empty=True)
    return statistics.fmean(times[1:]), triangles


def ours_ms_per_frame(preset, count: int, frames: int, triangles: int, size: tuple[int, int], out_dir: Path
                      ) -> dict:
    """Our bake of the preset (its monkey an SDF collider) to PNG files: ms per frame after the first."""
    import bpy

    import addon
    from addon.cli import build_scene
    from addon.output.bake import BakeJob

    scene, emitter = build_scene(preset, (1, frames + 1), size, out_dir)
    addon.register()
    scene.gpu_particles_output.bake_path = scene.render.filepath
    add_colliders(preset, triangles)
    bpy.context.view_layer.objects.active = emitter
    bpy.ops.gpu_particles.add(preset=PRESET)
    emitter.gpu_particles.active_effect.count = count
    job = BakeJob(scene)
    job.step()
    steady = time.perf_counter()
    while not job.finished:
        job.step()
    ms = (time.perf_counter() - steady) / frames * 1e3
    job.close()
    assert len(job.written) == frames + 1, f"{len(job.written)} of {frames + 1} frames written"
    sdf = job.renderer.simulation.sdf
    result = {"ms_per_frame": ms, "sdf_rebuilds": sdf.rebuilds if sdf is not None else 0,
              "device": job.renderer.host.device}
    addon.unregister()
    bpy.ops.wm.read_factory_settings(use_empty=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--frames", type=int, default=24)
    parser.add_argument("--triangles", type=int, default=100_000, help="the monkey's, about")
    parser.add_argument("--res", default="1920x1080", help="our bake's frame size")
    parser.add_argument("--out", type=Path, help="results folder (default bench/results/)")
    args = parser.parse_args()
    from addon.cli import parse_resolution
    from addon.engine.settings.presets import load_preset

    preset = load_preset(PRESET)
    out_dir = Path(tempfile.mkdtemp(prefix="gpu_particles_sdf_"))
    try:
        peer, triangles = peer_ms_per_frame(preset, args.count, args.frames, args.triangles, out_dir)
        ours = ours_ms_per_frame(preset, args.count, args.frames, args.triangles, parse_resolution(args.res), out_dir)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    device = ours.pop("device")
    records.write("sdf", device, [{
        "case": f"end-to-end-{label(args.count)}-{label(args.triangles)}", "count": args.count, "triangles": triangles, "frames": args.frames, "res": args.res,
        "ms_per_frame": round(ours["ms_per_frame"], 2), "peer_ms_per_frame": round(peer, 2),
        "speedup": round(peer / ours["ms_per_frame"], 2), "sdf_rebuilds": ours["sdf_rebuilds"]}], results=args.out)


if __name__ == "__main__":
    main()
