"""Baking a scene's effects to an image sequence, one frame per ``step()``.

Everything that can fail is checked in :func:`plan_bake` before the first
frame; each frame is written to a hidden temporary name and renamed, so a
cancelled or failed bake leaves only complete frames behind.
"""

from __future__ import annotations

import json
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import bpy
import numpy as np

from .csg_ui import check_scene_cloud, scene_has_cloud
from .engine.cache_format import CacheError
from .engine.settings import SettingsError, as_dict, check_for_gpu
from .engine.turbulence import check_resolution
from .hosts.base import GPUMemoryError, NoGPUError, ShaderCompileError
from .hosts.blender import BlenderHost
from .job_operator import FrameJob
from .render import SceneRenderer, check_camera
from .scene_snapshot import SceneSnapshot, read_snapshot
from .sim_cache import addon_version

FORMATS = {"PNG": ".png", "OPEN_EXR": ".exr", "OPEN_EXR_MULTILAYER": ".exr"}


class BakeError(RuntimeError):
    """Why a bake cannot start or had to stop; shown to the user as is."""


@dataclass(frozen=True)
class BakePlan:
    frames: range
    width: int
    height: int
    output_dir: Path
    snapshot: SceneSnapshot  # the scene's inputs, read once for the plan and the renderer


def output_path(scene, frame: int) -> Path:
    """Blender's frame path for ``scene.render.filepath`` (``#`` padding, extension)."""
    return Path(bpy.path.abspath(scene.render.frame_path(frame=frame)))


def _check_writable(folder: Path) -> None:
    """Create the folder and prove a file can be written there (then remove it)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".gpu_particles_probe_{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        raise BakeError(f"Output folder '{folder}' cannot be created or written: {error.strerror or error}") from None


def plan_bake(scene, host, frames: tuple[int, int] | None = None) -> BakePlan:
    """Check everything a bake needs, in the order a user would fix it.

    ``frames``: (first, last) to render inside the scene's range (default: all of it); the
    simulation still starts at the scene's start frame, from the disk cache when it has the frames."""
    try:
        check_camera(scene.camera)
    except SettingsError as error:
        raise BakeError(str(error)) from None
    has_cloud = scene_has_cloud(scene)
    if has_cloud:
        try:
            check_scene_cloud(scene, host.max_texture_size)
        except SettingsError as error:
            raise BakeError(f"CSG point cloud: {error}") from None
    try:
        snapshot = read_snapshot(scene)
    except SettingsError as error:
        raise BakeError(str(error)) from None
    if not snapshot.effects and not has_cloud:
        raise BakeError("No enabled GPU Particles effects in the scene: add one with Add Effect")
    for effect in snapshot.effects:
        try:
            check_for_gpu(effect.settings, host.max_texture_size)
            check_resolution(effect.settings.turbulence_resolution, host.max_texture_3d_size)
        except SettingsError as error:
            raise BakeError(f"Effect '{effect.effect_name}' on '{effect.object_name}': {error}") from None
    if scene.frame_end < scene.frame_start:
        raise BakeError(f"Frame range runs backwards: {scene.frame_start} to {scene.frame_end}")
    scale = scene.render.resolution_percentage / 100
    width, height = round(scene.render.resolution_x * scale), round(scene.render.resolution_y * scale)
    if width < 1 or height < 1 or max(width, height) > host.max_texture_size:
        raise BakeError(f"Resolution {width}x{height} is beyond this GPU's texture limit of {host.max_texture_size}")
    file_format = scene.render.image_settings.file_format
    if file_format not in FORMATS:
        raise BakeError(f"Output format {file_format} is not supported: use PNG or OpenEXR")
    first, last = frames or (scene.frame_start, scene.frame_end)
    if not scene.frame_start <= first <= last <= scene.frame_end:
        raise BakeError(f"Frames {first}-{last} are not inside the scene's range {scene.frame_start}-{scene.frame_end}")
    folder = output_path(scene, first).parent
    _check_writable(folder)
    return BakePlan(range(first, last + 1, scene.frame_step), width, height, folder, snapshot)


class BakeJob(FrameJob):
    """A bake in progress: ``step()`` renders and writes the next frame."""

    def __init__(self, scene, frames: tuple[int, int] | None = None):
        try:
            host = BlenderHost()
            self.plan = plan_bake(scene, host, frames)
            self.renderer = SceneRenderer(scene, self.plan.width, self.plan.height, host, exact_sort=True,
                                          cache="WRITE", snapshot=self.plan.snapshot)
            self.preroll = self.renderer.prepare(self.plan.frames[0])
        except (NoGPUError, GPUMemoryError, ShaderCompileError, SettingsError, ValueError, CacheError) as error:
            raise BakeError(str(error)) from None
        self.scene = scene
        self.frames = list(self.plan.frames)
        self.done = 0
        self.written = []
        self.overflow = {}  # frame -> overflowing adds (the operator warns)
        self.emax = []  # Emax each frame used (follows the frames in AUTO mode)
        self.started = time.perf_counter()
        self.image = bpy.data.images.new("GPU Particles Bake", self.plan.width, self.plan.height,
                                         alpha=True, float_buffer=True)

    def step(self) -> int | None:
        """Render and write one frame and return its number, or run a piece of a long preroll (None)."""
        try:
            if self.preroll.step():
                return None
        except CacheError as error:
            raise BakeError(str(error)) from None
        frame = self.frames[self.done]
        self.emax.append(self.renderer.compositor.emax)
        try:
            pixels = self.renderer.render(frame)
        except (SettingsError, CacheError) as error:  # e.g. a CSG primitive animated to a zero size, a full disk
            raise BakeError(f"Frame {frame}: {error}") from None
        if self.renderer.frame_stats.overflow:
            self.overflow[frame] = self.renderer.frame_stats.overflow
        self._write(frame, pixels)
        self.done += 1
        return frame

    def _write(self, frame: int, pixels: np.ndarray) -> None:
        final = output_path(self.scene, frame)
        partial = final.with_name(f".{final.name}.partial{final.suffix}")
        self.image.pixels.foreach_set(pixels.ravel())
        try:
            _save_render(self.image, str(partial), scene=self.scene)
            os.replace(partial, final)
        except (OSError, RuntimeError) as error:
            partial.unlink(missing_ok=True)
            raise BakeError(f"Could not write frame {frame} to '{final}': {error}") from None
        self.written.append(final)

    def close(self, cancelled: bool = False) -> Path | None:
        """Free the scratch image and write the JSON sidecar of what was baked."""
        if self.image is not None:
            bpy.data.images.remove(self.image)
            self.image = None
        if not self.written:
            return None
        sidecar = self.plan.output_dir / "gpu_particles_bake.json"
        record = {
            "extension": __package__,
            "version": addon_version(),
            "blender": bpy.app.version_string,
            "device": self.renderer.host.device,
            "frames": [self.frames[0], self.frames[self.done - 1] if self.done else None],
            "cancelled": cancelled,
            "resolution": [self.plan.width, self.plan.height],
            "seconds": round(time.perf_counter() - self.started, 3),
            "render": as_dict(self.renderer.compositor.render),
            "emax": self.emax,
            "overflow": {str(frame): count for frame, count in self.overflow.items()},
            "effects": [{"object": name, **as_dict(settings)} for name, settings in self.renderer.effects],
            "files": [p.name for p in self.written],
            "last_frame": self.renderer.stats(),
            "cache": self.renderer.cache_record(),
        }
        sidecar.write_text(json.dumps(record, indent=2) + "\n")
        return sidecar


# What an EXR frame always is: half float RGBA, linear (what compositors expect).
EXR_SETTINGS = {"color_mode": "RGBA", "color_depth": "16"}


@contextmanager
def _frame_format(image_settings):
    """EXR frames as half float RGBA whatever the scene's EXR options say; restored afterwards."""
    if not image_settings.file_format.startswith("OPEN_EXR"):
        yield
        return
    saved = {name: getattr(image_settings, name) for name in EXR_SETTINGS}
    try:
        for name, value in EXR_SETTINGS.items():
            setattr(image_settings, name, value)
        yield
    finally:
        for name, value in saved.items():
            setattr(image_settings, name, value)


def _save_render(image, filepath: str, scene) -> None:
    """Write with the scene's output format and color management (one seam for tests)."""
    with _frame_format(scene.render.image_settings):
        image.save_render(filepath, scene=scene)
