"""Suite ``fidelity``: our baked frame against Cycles rendering the same particles, scored by NVIDIA's FLIP.

Per preset (default, snow, embers), with motion blur and depth of field on (the preset's own, or a half-frame
shutter and f/2.8 focused on the emitter): the frame baked by our engine (``SceneRenderer.render``, linear);
the same frame's live particles as a PointCloud (``output/export.py``) with the splat's energy (``splat_radii``)
and their velocities (Cycles' motion blur of points), rendered by Cycles from the same camera with the same
shutter and lens on a black world; then mean FLIP (HDR, both linear) of ours against Cycles'.  Fields:
``flip_mean``, ``ours_ms`` (our draw and read-back of the frame, warm), ``cycles_ms`` (the Cycles render),
``energy_ratio`` (our frame's sum over Cycles'), with ``--noise`` ``flip_cycles_noise`` (Cycles against itself),
with ``--converged N`` Cycles at N samples as a near-noise-free reference: ``flip_converged`` (ours against it)
and ``flip_cycles_converged`` (the samples-per-pixel frame against it: what its noise alone scores);
beside the records, per preset, the FLIP error map and (unless ``--no-frames``) both frames as JPEG
(``<prefix>-fidelity-<preset>-{flip,ours,cycles}.jpg``, ``bench/pictures.py``).  Glints are off (Cycles has none).  Cycles renders on
OptiX or CUDA where there is a card, else the CPU.

    .venv/bin/python bench/fidelity.py --noise --no-frames               # 1920x1080, 1024 samples (GPU machine)
    .venv/bin/python bench/fidelity.py --presets snow --converged 16384  # ... and against 16384 samples
    .venv/bin/python bench/fidelity.py --res 320x180 --samples 16        # small, on a CPU
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import records  # noqa: E402
from pictures import save_rgb  # noqa: E402

PRESETS = ("default", "snow", "embers")
GPU_KINDS = ("OPTIX", "CUDA")  # Cycles' devices, tried in order (a fresh machine compiles OptiX's kernels: ~400 s)
FRAME = 24
SHUTTER = 0.5  # frames, for a preset whose stage has no motion blur
FSTOP = 2.8  # for a preset whose stage has no depth of field: focused on the emitter
TRANSPARENT_BOUNCES = 1024  # points a camera ray passes through before Cycles stops it
QUAD_ENERGY = 0.5  # an additive sprite (raster_quads.glsl) adds its color times (1 - d^2) over its disc: half


def preset_scene(preset: str, width: int, height: int, out: Path):
    """The preset's stage and effect as the bake builds them, motion blur and depth of field on, no glints."""
    from bake_throughput import effect_scene

    from addon.cli import apply_lens
    from addon.engine.settings.presets import load_preset

    scene = effect_scene(preset, load_preset(preset).effect.count, width, height, (1, FRAME), out)
    camera = scene.camera
    if not camera.data.dof.use_dof:
        emitter = next(obj for obj in scene.objects if obj.gpu_particles.effects)
        apply_lens(scene, None, (FSTOP, (camera.matrix_world.translation - emitter.matrix_world.translation).length))
    if not scene.render.use_motion_blur:
        apply_lens(scene, SHUTTER, None)
    scene.gpu_particles.glints = "NONE"
    return scene


def ours(scene, width: int, height: int):
    """(our linear RGB frame, rows top to bottom; the renderer; warm ms of one draw and read-back)."""
    from addon.scene.renderer import SceneRenderer

    renderer = SceneRenderer(scene, width, height)
    renderer.render(FRAME)  # simulates up to the frame and compiles the kernels
    times = []
    for _ in range(3):
        start = time.perf_counter()
        frame = renderer.render(FRAME)
        times.append((time.perf_counter() - start) * 1e3)
    return frame[::-1, :, :3].astype(np.float64), renderer, float(np.median(times))


def splat_radii(system, camera, positions: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """World radii of spheres that add what the splat adds for each particle: a sphere of radius r px adds its
    color times pi r^2; a point adds it times its coverage (pi r^2 at most 1, particle_look.glsl), an additive
    sprite times its coverage and QUAD_ENERGY pi max(r, 1)^2."""
    w = np.c_[positions, np.ones(len(positions))] @ np.asarray(camera.view_proj, np.float64)[3]
    w = np.maximum(w, 1e-6)
    radius_px = radii * camera.pixels_per_unit / w
    coverage = np.minimum(math.pi * radius_px**2, 1.0)
    if system.settings.particle_type == "POINT":
        energy = coverage
    else:
        energy = coverage * QUAD_ENERGY * math.pi * np.maximum(radius_px, 1.0) ** 2
    return (np.sqrt(energy / math.pi) * w / camera.pixels_per_unit).astype(np.float32)


def export_cloud(scene, renderer, camera):
    """The drawn frame's live particles as one PointCloud object with the splat's energy and their velocity."""
    from addon.output.export import live_points, live_slots, pointcloud_object

    parts = []
    for system in renderer.simulation.systems:
        positions, radii, colors = live_points(system)
        _, vel_life, live = live_slots(system)
        parts.append((positions, splat_radii(system, camera, positions, radii), colors, vel_life[live, :3]))
    positions, radii, colors, velocities = (np.concatenate([p[i] for p in parts]) for i in range(4))
    obj = pointcloud_object("Fidelity points", (positions, radii, colors), scene.collection)
    obj.data.materials[0] = additive_material()  # not export's opaque points: they hide each other
    # Cycles blurs a point cloud along a "velocity" attribute (units per second) over the scene's shutter.
    obj.data.attributes.new("velocity", "FLOAT_VECTOR", "POINT").data.foreach_set(
        "vector", np.ascontiguousarray(velocities, np.float32).ravel())
    return obj


def additive_material():
    """Each point emits its Color attribute and lets light through, as the splat adds particles (a ray
    continuing through a point does not hit the same point again: it adds the color once)."""
    import bpy

    from addon.output.export import COLOR_ATTRIBUTE

    material = bpy.data.materials.new("Fidelity additive points")
    nodes, links = material.node_tree.nodes, material.node_tree.links
    nodes.clear()
    attribute, emission = nodes.new("ShaderNodeAttribute"), nodes.new("ShaderNodeEmission")
    attribute.attribute_name = COLOR_ATTRIBUTE
    add = nodes.new("ShaderNodeAddShader")
    links.new(attribute.outputs["Color"], emission.inputs["Color"])
    links.new(emission.outputs["Emission"], add.inputs[0])
    links.new(nodes.new("ShaderNodeBsdfTransparent").outputs["BSDF"], add.inputs[1])
    links.new(add.outputs["Shader"], nodes.new("ShaderNodeOutputMaterial").inputs["Surface"])
    return material


def cycles_device(scene, kinds=GPU_KINDS) -> str:
    """The first of ``kinds`` (OptiX, CUDA) that has a device, else the CPU: what Cycles renders on."""
    import bpy

    preferences = bpy.context.preferences.addons["cycles"].preferences
    for kind in kinds:
        try:
            preferences.compute_device_type = kind
        except TypeError:
            continue
        preferences.get_devices()
        devices = [d for d in preferences.devices if d.type == kind]
        if devices:
            for device in preferences.devices:
                device.use = device.type == kind
            scene.cycles.device = "GPU"
            return kind
    scene.cycles.device = "CPU"
    return "CPU"


def cycles(scene, samples: int, folder: Path, seed: int = 0, kinds=GPU_KINDS):
    """(Cycles' linear RGB frame, rows top to bottom; ms; the device) of the scene without our layer;
    ``seed``: Cycles' sampling seed; ``kinds``: the GPU devices to try (none: the CPU)."""
    import bpy

    scene.gpu_particles_output.use_render = False  # the point cloud only
    scene.render.engine = "CYCLES"
    device = cycles_device(scene, kinds)
    scene.world = None  # black
    scene.render.film_transparent = False
    scene.cycles.samples, scene.cycles.seed = samples, seed
    scene.cycles.use_adaptive_sampling = False
    scene.cycles.use_denoising = False
    scene.cycles.max_bounces = 0  # emission seen directly: nothing else is in the scene
    scene.cycles.transparent_max_bounces = TRANSPARENT_BOUNCES
    scene.view_settings.view_transform = "Standard"
    settings = scene.render.image_settings
    settings.file_format, settings.color_depth, settings.color_mode = "OPEN_EXR", "32", "RGB"
    scene.render.filepath = str(folder / "cycles.exr")
    scene.frame_set(FRAME)
    start = time.perf_counter()
    bpy.ops.render.render(write_still=True)
    ms = (time.perf_counter() - start) * 1e3
    image = bpy.data.images.load(scene.render.filepath)
    width, height = image.size
    pixels = np.empty(width * height * 4, np.float32)
    image.pixels.foreach_get(pixels)
    bpy.data.images.remove(image)
    return pixels.reshape(height, width, 4)[::-1, :, :3].astype(np.float64), ms, device


def flip(reference: np.ndarray, test: np.ndarray) -> tuple[np.ndarray, float]:
    """(the magma error map, mean FLIP) of ``test`` against ``reference``, both linear HDR."""
    import flip_evaluator

    error_map, mean, _ = flip_evaluator.evaluate(np.ascontiguousarray(reference, np.float32),
                                                 np.ascontiguousarray(test, np.float32), "HDR")
    return error_map, float(mean)


def measure(preset: str, width: int, height: int, samples: int, pictures: Path, folder: Path,
            noise: bool = False, kinds=GPU_KINDS, frames: bool = True, converged: int = 0) -> dict:
    """The case's record; ``noise``: also ``flip_cycles_noise``, Cycles against itself with another seed (the
    part of ``flip_mean`` its sampling noise alone makes at this many samples); ``converged``: also Cycles at
    that many samples (a third seed) as the reference of ``flip_converged`` and ``flip_cycles_converged``;
    ``frames``: both frames as JPEG beside the error map."""
    import addon
    from addon.scene.renderer import camera_of

    scene = preset_scene(preset, width, height, folder)
    try:
        frame, renderer, ours_ms = ours(scene, width, height)
        export_cloud(scene, renderer, camera_of(scene, width, height))
        reference, cycles_ms, device = cycles(scene, samples, folder, kinds=kinds)
        again = cycles(scene, samples, folder, seed=1, kinds=kinds)[0] if noise else None
        truth = cycles(scene, converged, folder, seed=2, kinds=kinds)[0] if converged else None
    finally:
        addon.unregister()  # the next preset's scene registers it again
    error_map, mean = flip(reference, frame)
    saved = (("flip", error_map, False), ("ours", frame, True), ("cycles", reference, True))[:3 if frames else 1]
    for name, rgb, display in saved:
        save_rgb(pictures.with_name(f"{pictures.name}-{preset}-{name}.jpg"), rgb, display)
    return {"case": preset, "n": int(sum(system.count for system in renderer.simulation.systems)), "width": width,
            "height": height, "samples": samples, "flip_mean": mean, "ours_ms": ours_ms, "cycles_ms": cycles_ms,
            "energy_ratio": float(frame.sum() / max(reference.sum(), 1e-30)), "cycles_device": device,
            **({"flip_cycles_noise": flip(reference, again)[1]} if noise else {}),
            **({"converged_samples": converged, "flip_converged": flip(truth, frame)[1],
                "flip_cycles_converged": flip(truth, reference)[1]} if converged else {})}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--res", default="1920x1080", help="WIDTHxHEIGHT")
    parser.add_argument("--samples", type=int, default=1024, help="Cycles samples per pixel")
    parser.add_argument("--presets", default=",".join(PRESETS))
    parser.add_argument("--out", type=Path, default=records.RESULTS, help="records folder")
    parser.add_argument("--noise", action="store_true", help="render Cycles twice: its own noise's FLIP too")
    parser.add_argument("--converged", type=int, default=0, metavar="N",
                        help="also score both against Cycles at N samples (a near-converged reference)")
    parser.add_argument("--no-frames", action="store_true",
                        help="save the error maps only (the GPU machine returns at most 8 files a call)")
    parser.add_argument("--cycles-cpu", action="store_true",
                        help="Cycles on the CPU even where there is a card (no kernels to compile: a quick check)")
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.res.lower().split("x"))

    import datetime

    from addon.hosts.blender import BlenderHost

    device = BlenderHost().device
    args.out.mkdir(parents=True, exist_ok=True)
    pictures = args.out / f"{records.prefix(device, datetime.date.today().isoformat())}-fidelity"
    rows = []
    for preset in args.presets.split(","):
        with tempfile.TemporaryDirectory() as folder:
            rows.append(measure(preset, width, height, args.samples, pictures, Path(folder), args.noise,
                                () if args.cycles_cpu else GPU_KINDS, not args.no_frames, args.converged))
    records.write("fidelity", device, rows, results=args.out)


if __name__ == "__main__":
    main()
