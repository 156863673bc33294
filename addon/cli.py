"""Command line: ``python -m addon.cli bake|presets`` (what ``make bake`` runs).

The bake builds a scene from the preset's stage (camera, emitter, force fields, colliders, lights), adds the
effect with the ``gpu_particles.add`` operator and bakes with
``gpu_particles.bake``: the same code a Blender user runs from the panel.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

# The engine's modules (numpy: 0.1-0.2 s) are imported once the GPU probe has started: see bake().


class UsageError(ValueError):
    pass


# The first frame of the scene the command line builds without --shot (Blender's own default start): a bake of
# frames 58-60 simulates from here, as F12 on those frames of a whole shot does, so it gives the whole bake's frames.
SHOT_START = 1


def parse_frames(text: str) -> tuple[int, int]:
    """``first-last``, or one frame ``n``."""
    match = re.fullmatch(r"\s*(-?\d+)\s*(?:-\s*(-?\d+)\s*)?", text)
    if not match:
        raise UsageError(f"FRAMES must look like 1-48 (or 7 for one frame), not '{text}'")
    first, last = int(match.group(1)), int(match.group(2) or match.group(1))
    if last < first:
        raise UsageError(f"frame range runs backwards: {first} to {last}")
    return first, last


def parse_resolution(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if not match or int(match.group(1)) < 1 or int(match.group(2)) < 1:
        raise UsageError(f"RES must look like 960x540, not '{text}'")
    return int(match.group(1)), int(match.group(2))


def parse_dof(text: str) -> tuple[float, float]:
    match = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*@\s*(\d+(?:\.\d*)?)\s*", text)
    if not match or float(match.group(1)) <= 0 or float(match.group(2)) <= 0:
        raise UsageError(f"DOF must look like 2.8@6 (f-stop @ focus distance), not '{text}'")
    return float(match.group(1)), float(match.group(2))


def apply_lens(scene, motion_blur: float | None, dof: tuple[float, float] | None) -> None:
    """Turn on Blender's own motion blur (shutter in frames) and the camera's depth of field (f-stop, distance)."""
    if motion_blur is not None:
        scene.render.use_motion_blur = True
        scene.render.motion_blur_shutter = motion_blur
    if dof is not None:
        scene.camera.data.dof.use_dof = True
        scene.camera.data.dof.aperture_fstop, scene.camera.data.dof.focus_distance = dof


def _keyframe_orbit(obj, center, radius, seconds, frames, fps):
    """Circle the emitter around ``center`` (radius in the XY plane), one turn per ``seconds``, at angle 0 on
    frame 1 whatever part of the shot a run bakes: a bake of frame 30 alone puts the emitter where frame 30 of
    the whole shot does (it was at angle 0 on the run's first frame)."""
    first, last = frames
    for frame in range(first - 1, last + 1):
        angle = 2 * math.pi * (frame - 1) / (seconds * fps)
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
    emitter.scale = stage_emitter.get("scale", (1.0, 1.0, 1.0))  # the emitter shape in its object's space
    scene.collection.objects.link(emitter)
    from .scene.stage_fields import add_stage_fields
    from .scene.stage_lights import add_stage_light_setup

    add_stage_fields(preset.stage.get("fields", ()))
    add_stage_light_setup(preset.stage, scene=scene)
    if stage_emitter.get("orbit_radius"):
        fps = scene.render.fps / scene.render.fps_base
        _keyframe_orbit(emitter, tuple(emitter.location), stage_emitter["orbit_radius"],
                        stage_emitter.get("orbit_seconds", 3.0), frames, fps)
    bpy.context.view_layer.objects.active = emitter
    apply_stage_lens(scene, camera, emitter, preset.stage)
    return scene, emitter


def apply_stage_lens(scene, camera, emitter, stage: dict) -> None:
    """Blender's own motion blur and depth of field, as the preset's stage sets them (the splat reads them).

    ``stage["motion_blur"]``: ``{"shutter": frames}``; ``stage["camera"]["dof"]``:
    ``{"fstop": f, "focus_distance": m}`` or ``{"fstop": f, "focus_on_emitter": true}``.
    """
    blur, dof = stage.get("motion_blur"), stage.get("camera", {}).get("dof")
    scene.render.use_motion_blur = camera.data.dof.use_dof = False
    apply_lens(scene, blur.get("shutter", 0.5) if blur else None,
               (dof.get("fstop", 2.8), dof.get("focus_distance", 10.0)) if dof else None)
    if dof and dof.get("focus_on_emitter"):
        camera.data.dof.focus_object = emitter


def add_preset_effect(scene, name: str, preset) -> None:
    """The preset's stage extras (a CSG cloud, colliders) and its effect on the active object, as the panel
    adds it."""
    import bpy

    if "csg" in preset.stage:
        from .scene.csg import add_stage_primitives

        add_stage_primitives(scene, preset.stage["csg"])
    if preset.stage.get("colliders"):
        from .scene.stage_colliders import add_stage_colliders

        emitter = bpy.context.view_layer.objects.active
        add_stage_colliders(preset.stage["colliders"])
        bpy.context.view_layer.objects.active = emitter
    bpy.ops.gpu_particles.add(preset=name)
    if preset.stage.get("flock_target"):
        add_flock_target(scene, preset.stage["flock_target"])


def add_flock_target(scene, stage_target: dict) -> None:
    """An Empty the active object's new effect flocks to: ``{"location": [x, y, z], "orbit_radius": r,
    "orbit_seconds": s}``, circling as the emitter's orbit does, keyed from frame 0 to the scene's end (a bake of
    any part of the shot sees the path a whole one does)."""
    import bpy

    emitter = bpy.context.view_layer.objects.active
    target = bpy.data.objects.new("Flock Target", None)
    target.location = stage_target.get("location", (0.0, 0.0, 0.0))
    scene.collection.objects.link(target)
    if stage_target.get("orbit_radius"):
        fps = scene.render.fps / scene.render.fps_base
        _keyframe_orbit(target, tuple(target.location), stage_target["orbit_radius"],
                        stage_target.get("orbit_seconds", 8.0), (1, scene.frame_end), fps)
    effects = emitter.gpu_particles.effects
    effects[emitter.gpu_particles.active_index].flock_target = target


class GPUProbe:
    """Blender's gpu.init() crashes the whole process when EGL has no usable driver, so the command line first
    makes the same EGL context in a child process (hosts/egl_probe.py: ctypes, no bpy, about 0.1 s) and
    reports instead.  The child starts first thing and is waited for only when the scene is ready for the
    GPU, by when it has long finished."""

    SCRIPT = Path(__file__).resolve().parent / "hosts" / "egl_probe.py"

    def __init__(self):
        self.started_at = time.time()
        # -I -S: the standard library only, whatever PYTHONPATH or the venv's site-packages hold.
        self.child = subprocess.Popen([sys.executable, "-I", "-S", str(self.SCRIPT)], stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True)
        self.seconds: dict[str, float] = {}  # what the child took (for --timings)

    def check(self) -> None:
        """Wait for the child; NoGPUError with the reason it found when Blender would get no context."""
        from .hosts.base import NoGPUError

        try:
            output, _ = self.child.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            raise NoGPUError("no GPU context could be created: the EGL driver did not answer in 120 s") from None
        lines = [line for line in output.splitlines() if line.strip()]
        fields = lines[-1].split("\t") if lines else []
        if self.child.returncode != 0 or len(fields) != 4:
            status, crashed = self.child.returncode, self.child.returncode < 0
            reason = (f"the EGL probe crashed: {signal.strsignal(-status) or f'signal {-status}'}" if crashed
                      else lines[-1] if lines else f"the EGL probe exited with status {status}")
            log = (lines if crashed else lines[:-1])[-3:]  # what the driver printed
            raise NoGPUError(
                f"no GPU context could be created ({reason}); on a headless Linux machine install Mesa's EGL "
                "(libegl1 libegl-mesa0 libgl1-mesa-dri, or run `make setup`) or the GPU's driver"
                + (":\n  " + "\n  ".join(log) if log else "")
            )
        self.seconds = {"probe EGL context": float(fields[2]), "probe process": float(fields[3]) - self.started_at}

    def stop(self) -> None:
        if self.child.poll() is None:
            self.child.kill()
        self.child.communicate()


def _gpu_texture_limit() -> int:
    from .hosts.blender import BlenderHost

    return BlenderHost().max_texture_size


def process_age() -> float | None:
    """Seconds since this process started (Linux), to tell the interpreter's start-up apart in ``--timings``."""
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])  # field 22, starttime
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError, AttributeError):
        return None
    return age if 0 <= age < 600 else None  # another clock (a time namespace): unknown


class Laps:
    """Seconds per stage of a bake run (``--timings``), to see where start-up goes on a given machine."""

    def __init__(self):
        self.age = process_age()
        self.started_at = time.time()
        self.started = self.last = time.perf_counter()
        self.laps = []

    def __call__(self, stage: str) -> None:
        now = time.perf_counter()
        self.laps.append((stage, now - self.last))
        self.last = now

    def report(self, destination: str, probe: dict, bake_record: dict) -> None:
        """One line on stderr (``-``), or a JSON file: the laps, the probe's, the bake's stages (its sidecar)."""
        stages = bake_record.get("stages", {})
        if destination == "-":
            text = "  ".join(f"{stage} {seconds:.2f} s" for stage, seconds in [*self.laps, *probe.items()])
            inside = "  ".join(f"{stage} {seconds:.3f} s" for stage, seconds in stages.items())
            print(f"gpu_particles bake: {text}" + (f"\n  inside the bake: {inside}" if inside else ""), file=sys.stderr)
            return
        report = {"interpreter_start_s": self.age, "started_at": self.started_at, "laps": dict(self.laps),
                  "probe": probe, "bake_stages": stages, "kernel_compilation": bake_record.get("kernel_compilation"),
                  "device": bake_record.get("device"), "exit_at": time.time()}
        Path(destination).write_text(json.dumps(report, indent=2) + "\n")


def bake(args) -> int:
    lap = Laps()
    probe = GPUProbe()
    try:
        return _bake(args, lap, probe)
    finally:
        probe.stop()


def _bake(args, lap: Laps, probe: GPUProbe) -> int:
    from .engine.settings.presets import PresetError, load_preset
    from .engine.settings.settings import SettingsError, check_count, effect_settings
    from .hosts.base import NoGPUError

    try:
        preset = load_preset(args.preset)
        frames = parse_frames(args.frames)
        shot = parse_frames(args.shot) if args.shot else (min(SHOT_START, frames[0]), frames[1])
        if not shot[0] <= frames[0] <= frames[1] <= shot[1]:
            raise UsageError(f"frames {args.frames} are not inside the shot {shot[0]}-{shot[1]}")
        if args.simulate_only and not args.cache:
            raise UsageError("--simulate-only fills the simulation cache: give it --cache DIR")
        resolution = parse_resolution(args.res)
        dof = parse_dof(args.dof) if args.dof is not None else None
        if args.motion_blur is not None and not args.motion_blur > 0:
            raise UsageError(f"--motion-blur is a shutter in frames and must be positive, not {args.motion_blur}")
        overrides = {k: v for k, v in (("count", args.count), ("seed", args.seed)) if v is not None}
        effect_settings({**vars(preset.effect), **{k: v for k, v in overrides.items() if k != "count"}})
    except (PresetError, UsageError, SettingsError) as error:
        return _refuse(error)
    lap("arguments")
    import bpy

    from . import register
    from .hosts.blender import _captured_output as captured_output  # the shader log catcher, reused
    from .ui import modal_job

    lap("import bpy")
    out_dir = Path(args.out).resolve()
    scene, emitter = build_scene(preset, shot, resolution, out_dir)
    lap("scene")
    # The add-on and the effect before the GPU: nothing here touches it, and the probe has the time to finish.
    register()
    apply_lens(scene, args.motion_blur, dof)
    scene.gpu_particles_output.bake_path = scene.render.filepath  # the bake's own output setting
    for name in ("points", "volumes", "usd"):  # files beside the frames (output/extras.py)
        setattr(scene.gpu_particles_output, f"write_{name}", getattr(args, name))
    scene.gpu_particles_output.volume_voxel_size = args.voxel_size
    add_preset_effect(scene, args.preset, preset)
    for name in ("point_filter", "glints"):  # after the preset's render settings
        if getattr(args, name) is not None:
            setattr(scene.gpu_particles, name, getattr(args, name))
    if args.cache:
        scene.gpu_particles.cache_directory = str(Path(args.cache).resolve())
    lap("register and add the effect")
    try:
        probe.check()
        lap("GPU probe (waiting for it)")
        if args.count is not None and args.count > 0:
            check_count(args.count, _gpu_texture_limit())
        effect_settings({**vars(preset.effect), **overrides})
    except (SettingsError, NoGPUError) as error:
        return _refuse(error)
    effect = emitter.gpu_particles.active_effect
    for name, value in overrides.items():
        setattr(effect, name, value)
    failure, result = None, None
    # Blender prints every operator report too ("Info: ...", "Error: ..."): keep them out of the
    # terminal and say each thing once, here, warnings and errors on stderr.  The progress line
    # goes to the terminal itself.
    modal_job.progress_stream = terminal = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    try:
        with captured_output() as log:
            try:
                if args.simulate_only:
                    result = bpy.ops.gpu_particles.bake_simulation()
                else:
                    result = bpy.ops.gpu_particles.bake(frame_start=frames[0], frame_end=frames[1])
            except RuntimeError as error:  # the operator's ERROR report
                failure = str(error).removeprefix("Error: ").strip()
    finally:
        modal_job.progress_stream = None
        terminal.close()
    lap("bake")
    for line in log[0].splitlines():
        if line.startswith("Warning: "):
            print(f"gpu_particles bake: {line.removeprefix('Warning: ')}", file=sys.stderr)
    if failure is not None:
        return _refuse(failure)
    if result != {"FINISHED"}:  # Ctrl-C: the frames written so far are complete
        print("gpu_particles bake: cancelled", file=sys.stderr)
        return 130
    seconds = time.perf_counter() - lap.started
    if args.simulate_only:
        print(f"gpu_particles bake: simulated frames {shot[0]}-{shot[1]} into {args.cache} in {seconds:.1f} s")
    else:
        print(f"gpu_particles bake: wrote frames {frames[0]}-{frames[1]} at {resolution[0]}x{resolution[1]} to {out_dir} "
              f"in {seconds:.1f} s")
    if args.timings:
        lap.report(args.timings, probe.seconds, _bake_record(out_dir))
    return 0


def _bake_record(out_dir: Path) -> dict:
    """The bake's sidecar (its stages for --timings), or nothing when it wrote none."""
    try:
        return json.loads((out_dir / "gpu_particles_bake.json").read_text())
    except (OSError, ValueError):
        return {}


def _refuse(error) -> int:
    print(f"gpu_particles bake: {error}", file=sys.stderr)
    return 2


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
    bake_parser.add_argument("--motion-blur", type=float, metavar="SHUTTER",
                             help="turn on Blender's motion blur with this shutter, in frames (e.g. 0.5)")
    bake_parser.add_argument("--dof", metavar="FSTOP@DISTANCE",
                             help="turn on the camera's depth of field, e.g. 2.8@6 (f-stop @ focus distance)")
    bake_parser.add_argument("--point-filter", choices=("ANTIALIASED", "ONE_PIXEL"),
                             help="points over 2x2 pixels (the default) or into one")
    bake_parser.add_argument("--glints", choices=("NONE", "STAR", "FLARE"),
                             help="star or flare sprites on the brightest points (the preset's choice by default)")
    bake_parser.add_argument("--shot", help="the scene's frame range, first-last, when --frames renders part of it "
                                            "(the simulation starts at the shot's first frame; default: frame "
                                            f"{SHOT_START} to the last of --frames)")
    bake_parser.add_argument("--cache", help="simulation cache folder: filled as frames are simulated, and a bake "
                                             "starts from its latest checkpoint at or before the first frame")
    bake_parser.add_argument("--simulate-only", action="store_true",
                             help="fill the simulation cache for the whole shot without rendering frames")
    bake_parser.add_argument("--points", action="store_true",
                             help="also write each frame's particles as a point cache (OUT/points/*.ply)")
    bake_parser.add_argument("--volumes", action="store_true",
                             help="also write each frame's particles as OpenVDB volumes (OUT/volumes/*.vdb)")
    bake_parser.add_argument("--voxel-size", type=float, default=0.0, metavar="LENGTH",
                             help="--volumes: edge of one voxel (default 0: Auto, half the particle size)")
    bake_parser.add_argument("--usd", action="store_true",
                             help="also write the particles as USD points (OUT/usd/*.usdc, one OUT/*.usda for all)")
    bake_parser.add_argument("--timings", nargs="?", const="-", metavar="FILE",
                             help="seconds per stage, start-up included: on stderr, or as JSON into FILE")
    args = parser.parse_args(argv)
    if args.command == "presets":
        from .engine.settings.presets import preset_names

        print("\n".join(preset_names()))
        return 0
    if not args.voxel_size >= 0.0:
        parser.error(f"--voxel-size {args.voxel_size:g}: a length of 0 (Auto) or more")
    return bake(args)


def exit_now(code: int) -> None:
    """Leave without the interpreter's and Blender's teardown (about 0.9 s on the GPU host, freeing memory the
    system frees anyway).  Nothing is lost: by now every frame and the sidecar are complete under their final
    names (written to a temporary name, then renamed) and the writer threads have ended; what is left is
    flushing output buffers (Python's and C's) and removing Blender's session temporary folder, as its exit does.
    Under a profiler, debugger or coverage tool the exit is the usual one: they write their results at exit."""
    if sys.gettrace() or sys.getprofile() or any(sys.monitoring.get_tool(tool) for tool in range(6)):
        sys.exit(code)
    sys.stdout.flush()
    sys.stderr.flush()
    bpy = sys.modules.get("bpy")
    if bpy is not None and Path(bpy.app.tempdir).name.startswith("blender_"):
        shutil.rmtree(bpy.app.tempdir, ignore_errors=True)
    if os.name == "posix":
        import ctypes

        ctypes.CDLL(None).fflush(None)
    os._exit(code)


if __name__ == "__main__":
    exit_now(main())
