"""Suite ``end-to-end``, case ``lit-1080p-1M``: a lit, self-shadowed smoke frame, ours against Blender's own way.

    source /tmp/bgpu/env && .venv/bin/python bench/lit_end_to_end.py      # the GPU host
    .venv/bin/python bench/lit_end_to_end.py --quick                       # any machine: 64x36, 10K particles

Ours: the smoke preset (alpha sprites lit by its sun and sky, self-shadowed) with 1M particles baked to PNG at
1920x1080 by ``bench/bake_throughput.measure_bake``: ms per finished frame on disk over a 10-second shot
(``--frames``, 240 at 24 fps), from the end of the first frame to the last file written, so the bake's
start-up is out and the drain is in (the writers' last frames, about one PNG's encode: 90 ms on 16 cores).
A short bake's figure (48 frames, the same drain over a fifth of the frames) is ``short_ms_per_frame``;
``stages`` are the shot's ms a frame per bake stage (``draw`` is the main thread's, ``encode+write`` a writer's).

Blender's way, in the same run and scene (camera, sun, World, resolution): the same particles (our frames'
positions and radii, exported by the product's Export Particles as Point Cloud, one object per frame) ->
Geometry Nodes Points to Volume -> a Principled Volume (the preset's albedo and anisotropy; density
``density * 0.75 / mean radius``: one particle's cross-section spread through its sphere), EEVEE with
volumetric shadows (Render > Volumes > Shadows) at ``--peer-samples`` render samples (1: its fastest, as
``bench/blender_way.py``). Timed per finished frame on disk: ``frame_set`` (the frame's cloud becomes the
one shown: Points to Volume runs) + ``bpy.ops.render.render`` writing the PNG, after a warm-up frame; its
particles are not simulated (ours are), which favours it. A comparable look, not the same pixels: overlapping
spheres give the volume their union, not their sum.

Both images are saved beside the record, ``<out>/lit-end-to-end-ours.jpg`` and ``-blender.jpg`` (``bench/pictures.py``), for a look.
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

import bpy  # noqa: E402

import addon  # noqa: E402
from addon.hosts.blender import BlenderHost  # noqa: E402
from bench import records  # noqa: E402
from bench.bake_throughput import effect_scene, measure_bake  # noqa: E402
from bench.blender_gpu import count_label, log, sized  # noqa: E402
from bench.blender_way import eevee_engine  # noqa: E402
from bench.pictures import save_file  # noqa: E402

PRESET = "smoke"
CASE = (1920, 1080, 1_000_000)
SHOT_FRAMES = 240  # a 10-second shot at 24 frames/s
VOXEL_AMOUNT = 128.0  # Points to Volume's voxels along the cloud's longest side


def volume_material(effect, density: float):
    """A Principled Volume in the preset's albedo, anisotropy and (extinction) density."""
    material = bpy.data.materials.new("Smoke Volume")
    nodes = material.node_tree.nodes
    nodes.clear()
    volume = nodes.new("ShaderNodeVolumePrincipled")
    volume.inputs["Color"].default_value = (*effect.albedo, 1.0)
    volume.inputs["Density"].default_value = density
    volume.inputs["Anisotropy"].default_value = effect.anisotropy
    output = nodes.new("ShaderNodeOutputMaterial")
    material.node_tree.links.new(volume.outputs["Volume"], output.inputs["Volume"])
    return material


def points_to_volume(material):
    """A node group: each point a sphere of its own radius in a fog volume, with ``material``."""
    tree = bpy.data.node_groups.new("Points to Volume", "GeometryNodeTree")
    tree.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    tree.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    nodes, links = tree.nodes, tree.links
    to_volume = nodes.new("GeometryNodePointsToVolume")
    to_volume.inputs["Density"].default_value = 1.0  # the material scales it
    to_volume.inputs["Resolution Mode"].default_value = "Amount"
    to_volume.inputs["Voxel Amount"].default_value = VOXEL_AMOUNT
    set_material = nodes.new("GeometryNodeSetMaterial")
    set_material.inputs["Material"].default_value = material
    links.new(nodes.new("NodeGroupInput").outputs[0], to_volume.inputs["Points"])
    links.new(nodes.new("GeometryNodeInputRadius").outputs["Radius"], to_volume.inputs["Radius"])
    links.new(to_volume.outputs["Volume"], set_material.inputs["Geometry"])
    links.new(set_material.outputs["Geometry"], nodes.new("NodeGroupOutput").inputs[0])
    return tree


def bake_ours(scene, out_dir: Path) -> Path:
    """Our lit frames of the scene's range baked to PNG (the product's bake); the first frame's file."""
    from addon.output.bake import BakeJob

    job = BakeJob(scene)
    while not job.finished:
        job.step()
    job.close()
    return min(job.written)


def blender_way(scene, effect, frames: int, samples: int, out_dir: Path) -> dict:
    """Per finished frame of the same particles as volumes in EEVEE: frame_set + render + write, after a warm-up."""
    from addon.output.export import export_range

    clouds = export_range(scene)
    radii = [cloud.data.attributes["radius"].data for cloud in clouds]
    mean_radius = statistics.fmean(statistics.fmean(r.value for r in list(data)[:: max(1, len(data) // 1000)])
                                   for data in radii)
    density = effect.density * 0.75 / max(mean_radius, 1e-6)
    tree = points_to_volume(volume_material(effect, density))
    for cloud in clouds:
        cloud.modifiers.new("Points to Volume", "NODES").node_group = tree
    effect.enabled = False  # our layer leaves the final render: only Blender's volume draws
    scene.render.engine = eevee_engine(scene)
    scene.eevee.taa_render_samples = samples
    scene.eevee.use_volumetric_shadows = True
    seconds = []
    for frame in range(scene.frame_start, scene.frame_start + frames + 1):  # the first warms up
        start = time.perf_counter()
        scene.frame_set(frame)
        scene.render.filepath = str(out_dir / f"blender_{frame:04d}.png")
        bpy.ops.render.render(write_still=True)
        if frame > scene.frame_start:
            seconds.append(time.perf_counter() - start)
    return {"peer_ms_per_frame": statistics.fmean(seconds) * 1e3, "peer_density": density,
            "image": out_dir / f"blender_{scene.frame_start:04d}.png"}


def measure(quick: bool, frames: int, short_frames: int, peer_frames: int, samples: int, out: Path) -> dict:
    width, height, count = sized(*CASE, quick)
    case = f"lit-{height}p-{count_label(count)}"
    log(f"end-to-end {case}: ours, a shot of {frames} frames, then {short_frames}")
    ours = measure_bake(PRESET, count, width, height, "PNG", frames)
    short = measure_bake(PRESET, count, width, height, "PNG", short_frames)
    scratch = Path(tempfile.mkdtemp(prefix="gpu_particles_lit_"))
    try:
        scene = effect_scene(PRESET, count, width, height, (1, 1 + peer_frames), scratch)
        effect = scene.objects["Emitter"].gpu_particles.active_effect
        out.mkdir(parents=True, exist_ok=True)
        save_file(bake_ours(scene, scratch), out / "lit-end-to-end-ours.jpg")
        log(f"end-to-end {case}: Points to Volume + EEVEE volumetric shadows, {peer_frames} frames after a warm-up")
        peer = blender_way(scene, effect, peer_frames, samples, scratch)
        save_file(peer.pop("image"), out / "lit-end-to-end-blender.jpg")
    finally:
        addon.unregister()
        shutil.rmtree(scratch, ignore_errors=True)
    ms = 1e3 / ours["fps"]
    return {"case": case, "ms_per_frame": ms, "peer": "pointcloud-points-to-volume-eevee-volumetric-shadows",
            **peer, "speedup": peer["peer_ms_per_frame"] / ms, "peer_samples": samples, "voxel_amount": VOXEL_AMOUNT,
            "frames": frames, "short_frames": short_frames, "short_ms_per_frame": 1e3 / short["fps"],
            "stages": {key: value for key, value in ours.items() if key.endswith(" ms")}, "peer_frames": peer_frames, "n": count, "width": width, "height": height,
            "preset": PRESET, "startup": "excluded", "images": ["lit-end-to-end-ours.jpg", "lit-end-to-end-blender.jpg"]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="64x36, 10K particles, 2 frames: checks the path")
    parser.add_argument("--frames", type=int, help="our timed shot's frames (240; --quick 2)")
    parser.add_argument("--short-frames", type=int, help="our short bake's frames (48; --quick 2)")
    parser.add_argument("--peer-frames", type=int, help="Blender's frames after a warm-up (4; --quick 1)")
    parser.add_argument("--peer-samples", type=int, default=1, help="EEVEE render samples of Blender's way")
    parser.add_argument("--out", type=Path, default=records.RESULTS, help="results folder (default bench/results/)")
    args = parser.parse_args(argv)
    frames = args.frames or (2 if args.quick else SHOT_FRAMES)
    short_frames = args.short_frames or (2 if args.quick else 48)
    peer_frames = args.peer_frames or (1 if args.quick else 4)
    device = BlenderHost().device
    row = measure(args.quick, frames, short_frames, peer_frames, args.peer_samples, args.out)
    records.write("end-to-end", device, [row], results=args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
