"""Command line: ``python -m addon.cli bake|presets`` (what ``make bake`` runs).

The bake builds a scene from the preset's stage (camera, emitter), adds the
effect with the ``gpu_particles.add`` operator and bakes with
``gpu_particles.bake``: the same code a Blender user runs from the panel.
"""

from __future__ import annotations

import argparse
import math
import re
import subprocess
import sys
from pathlib import Path

from .engine.presets import PresetError, load_preset, preset_names
from .engine.settings import SettingsError, check_count, effect_settings
from .hosts.base import NoGPUError


class UsageError(ValueError):
    pass


def parse_frames(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"\s*(-?\d+)\s*-\s*(-?\d+)\s*", text)
    if not match:
        raise UsageError(f"FRAMES must look like 1-48, not '{text}'")
    first, last = int(match.group(1)), int(match.group(2))
    if last < first:
        raise UsageError(f"frame range runs backwards: {first} to {last}")
    return first, last


def parse_resolution(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if not match or int(match.group(1)) < 1 or int(match.group(2)) < 1:
        raise UsageError(f"RES must look like 960x540, not '{text}'")
    return int(match.group(1)), int(match.group(2))


def _keyframe_orbit(obj, center, radius, seconds, frames, fps):
    """Circle the emitter around ``center`` (radius in the XY plane) over the frame range."""
    first, last = frames
    for frame in range(first - 1, last + 1):
        angle = 2 * math.pi * (frame - first) / (seconds * fps)
        obj.location = (center[0] + radius * math.cos(angle), center[1] + radius * math.sin(angle), center[2])
        obj.keyframe_insert("location", frame=frame)


def build_scene(preset, frames, resolution, out_dir: Path):
    """A fresh scene holding the preset's camera and emitter, output set to ``out_dir``."""
    import bpy
    from mathutils import Vector

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = frames
    scene.render.resolution_x, scene.render.resolution_y = resolution
    scene.render.resolution_percentage = 100
    scene.render.image_settings.file_format = "PNG"
    scene.render.image_settings.color_mode = "RGB"
    scene.render.filepath = str(out_dir / "frame_####")

    stage_camera = preset.stage.get("camera", {})
    camera = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    camera.data.lens = stage_camera.get("lens", 35.0)
    camera.location = stage_camera.get("location", (0.0, -10.0, 2.0))
    direction = Vector(stage_camera.get("target", (0.0, 0.0, 1.0))) - camera.location
    camera.rotation_euler = direction.to_track_quat("-Z", "Y").to_euler()
    scene.collection.objects.link(camera)
    scene.camera = camera

    stage_emitter = preset.stage.get("emitter", {})
    emitter = bpy.data.objects.new("Emitter", None)
    emitter.location = stage_emitter.get("location", (0.0, 0.0, 0.0))
    scene.collection.objects.link(emitter)
    if stage_emitter.get("orbit_radius"):
        fps = scene.render.fps / scene.render.fps_base
        _keyframe_orbit(emitter, tuple(emitter.location), stage_emitter["orbit_radius"],
                        stage_emitter.get("orbit_seconds", 3.0), frames, fps)
    bpy.context.view_layer.objects.active = emitter
    return scene, emitter


def add_preset_effect(scene, name: str, preset) -> None:
    """The preset's stage extras (a CSG cloud) and its effect on the active object, as the panel adds it."""
    import bpy

    if "csg" in preset.stage:
        from .csg_ui import add_stage_primitives

        add_stage_primitives(scene, preset.stage["csg"])
    bpy.ops.gpu_particles.add(preset=name)


def check_gpu_in_a_child() -> None:
    """Blender's gpu.init() crashes the whole process when EGL has no usable driver,
    so the command line tries it in a child process first and reports instead."""
    probe = subprocess.run([sys.executable, "-c", "import bpy, gpu; gpu.init()"], capture_output=True, text=True,
                           timeout=300)
    if probe.returncode != 0:
        log = [line for line in (probe.stdout + probe.stderr).splitlines() if line.strip()][-3:]
        raise NoGPUError(
            f"no GPU context could be created (gpu.init() exited with status {probe.returncode}); on a headless "
            "Linux machine install Mesa's EGL (libegl1 libegl-mesa0 libgl1-mesa-dri, or run `make setup`)"
            + (":\n  " + "\n  ".join(log) if log else "")
        )


def _gpu_texture_limit() -> int:
    from .hosts.blender import BlenderHost

    return BlenderHost().max_texture_size


def bake(args) -> int:
    try:
        preset = load_preset(args.preset)
        frames = parse_frames(args.frames)
        shot = parse_frames(args.shot) if args.shot else frames
        if not shot[0] <= frames[0] <= frames[1] <= shot[1]:
            raise UsageError(f"frames {args.frames} are not inside the shot {shot[0]}-{shot[1]}")
        if args.simulate_only and not args.cache:
            raise UsageError("--simulate-only fills the simulation cache: give it --cache DIR")
        resolution = parse_resolution(args.res)
        overrides = {k: v for k, v in (("count", args.count), ("seed", args.seed)) if v is not None}
        effect_settings({**vars(preset.effect), **{k: v for k, v in overrides.items() if k != "count"}})
        check_gpu_in_a_child()
        if args.count is not None and args.count > 0:
            check_count(args.count, _gpu_texture_limit())
        effect_settings({**vars(preset.effect), **overrides})
    except (PresetError, UsageError, SettingsError, NoGPUError) as error:
        print(f"gpu_particles bake: {error}", file=sys.stderr)
        return 2

    import bpy

    from . import register

    out_dir = Path(args.out).resolve()
    scene, emitter = build_scene(preset, shot, resolution, out_dir)
    register()
    add_preset_effect(scene, args.preset, preset)
    effect = emitter.gpu_particles.active_effect
    for name, value in overrides.items():
        setattr(effect, name, value)
    if args.cache:
        scene.gpu_particles.cache_directory = str(Path(args.cache).resolve())
    try:
        if args.simulate_only:
            bpy.ops.gpu_particles.bake_simulation()
        else:
            bpy.ops.gpu_particles.bake(frame_start=frames[0], frame_end=frames[1])
    except RuntimeError as error:  # the operator's ERROR report
        print(f"gpu_particles bake: {str(error).removeprefix('Error: ').strip()}", file=sys.stderr)
        return 2
    if args.simulate_only:
        print(f"gpu_particles bake: simulated frames {shot[0]}-{shot[1]} into {args.cache}")
    else:
        print(f"gpu_particles bake: wrote frames {frames[0]}-{frames[1]} at {resolution[0]}x{resolution[1]} to {out_dir}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="gpu_particles", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("presets", help="list preset names, one per line")
    bake_parser = commands.add_parser("bake", help="bake a preset to an image sequence, headless")
    bake_parser.add_argument("--preset", default="default")
    bake_parser.add_argument("--frames", default="1-48", help="first-last, e.g. 1-48")
    bake_parser.add_argument("--res", default="960x540", help="WIDTHxHEIGHT")
    bake_parser.add_argument("--out", default="out/bake", help="output folder")
    bake_parser.add_argument("--seed", type=int)
    bake_parser.add_argument("--count", type=int)
    bake_parser.add_argument("--shot", help="the scene's frame range, first-last, when --frames renders part of it "
                                            "(the simulation starts at the shot's first frame)")
    bake_parser.add_argument("--cache", help="simulation cache folder: filled as frames are simulated, and a bake "
                                             "starts from its latest checkpoint at or before the first frame")
    bake_parser.add_argument("--simulate-only", action="store_true",
                             help="fill the simulation cache for the whole shot without rendering frames")
    args = parser.parse_args(argv)
    if args.command == "presets":
        print("\n".join(preset_names()))
        return 0
    return bake(args)


if __name__ == "__main__":
    sys.exit(main())
