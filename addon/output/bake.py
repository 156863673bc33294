"""Baking a scene's effects to an image sequence, one frame per ``step()``.

Everything that can fail is checked in :func:`plan_bake` before the first
frame.  The main thread draws and reads back (PNG frames already in the
file's display colors: display_shader.py); writer threads convert what
is left and write (frame_writer.py), each frame to a hidden temporary name then renamed,
so a cancelled or failed bake leaves only complete frames behind.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import bpy

from ..engine.draw.readback import FrameReadback
from ..engine.settings.settings import SettingsError, as_dict
from ..engine.simulate.cache_format import CacheError
from ..hosts.base import GPUMemoryError, NoGPUError, ShaderCompileError
from ..hosts.blender import BlenderHost
from ..scene.cache import UnsavedBlendError, addon_version
from ..scene.csg import check_scene_cloud, scene_has_cloud
from ..scene.job import FrameJob
from ..scene.renderer import SceneRenderer, check_camera, check_effects, lens_summary
from ..scene.snapshot import SceneSnapshot, read_snapshot
from .display_shader import display_cache, display_shader
from .extras import ExtraOutput, enabled_extras, extra_path
from .formats import KINDS, file_extension, frame_format, supported_formats
from .frame_writer import FrameWriteError, FrameWriter, StageClock
from .render_layer import frame_file, render_size


class BakeError(RuntimeError):
    """Why a bake cannot start or had to stop; shown to the user as is."""


@dataclass(frozen=True)
class BakePlan:
    frames: range
    width: int
    height: int
    output_dir: Path
    snapshot: SceneSnapshot  # the scene's inputs, read once for the plan and the renderer
    extras: tuple[ExtraOutput, ...] = ()  # the files written besides the frames (extras.py)


def output_path(scene, frame: int) -> Path:
    """The bake's own frame path (``Scene.gpu_particles_output.bake_path``, ``#`` padding, the format's
    extension): never the render's output path, so a bake and a render cannot overwrite each other."""
    suffix = file_extension(scene.render.image_settings.file_format)
    return frame_file(scene.gpu_particles_output.bake_path, frame, suffix)


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

    ``frames``: (first, last) to render inside the scene's range (default: all of it); the simulation
    still starts at its own start (``properties.simulation_range``), from the disk cache when it has the frames,
    so any part gives the frames the whole range gives."""
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
        if snapshot.skipped:
            raise BakeError(f"Nothing to bake: {'; '.join(skipped.warning for skipped in snapshot.skipped)}")
        raise BakeError("No enabled GPU Particles effects in the scene: add one with Add Effect")
    try:
        check_effects(snapshot.effects, host)
    except SettingsError as error:
        raise BakeError(str(error)) from None
    if scene.frame_end < scene.frame_start:
        raise BakeError(f"Frame range runs backwards: {scene.frame_start} to {scene.frame_end}")
    width, height = render_size(scene)  # Blender's size, so a bake lines up with the render's plates
    if width < 1 or height < 1 or max(width, height) > host.max_texture_size:
        raise BakeError(f"Resolution {width}x{height} is beyond this GPU's texture limit of {host.max_texture_size}")
    file_format = scene.render.image_settings.file_format
    if file_format not in KINDS:
        raise BakeError(f"Output format {file_format} is not supported: use {supported_formats()}")
    first, last = frames or (scene.frame_start, scene.frame_end)
    if not scene.frame_start <= first <= last <= scene.frame_end:
        raise BakeError(f"Frames {first}-{last} are not inside the scene's range {scene.frame_start}-{scene.frame_end}")
    try:
        folder = output_path(scene, first).parent
    except UnsavedBlendError as error:
        raise BakeError(f"Bake Output: {error}") from None
    _check_writable(folder)
    extras = enabled_extras(scene)
    for extra in extras:
        _check_writable(extra_path(output_path(scene, first), extra).parent)
        try:
            if extra.requires is not None:
                extra.requires()
        except ImportError as error:  # refused before anything is simulated
            raise BakeError(f"Write {extra.label} needs a module this Blender lacks ({error})") from None
    return BakePlan(range(first, last + 1, scene.frame_step), width, height, folder, snapshot, extras)


class BakeJob(FrameJob):
    """A bake in progress: ``step()`` draws the next frame and hands the one before to the writer threads.

    Frames in flight are bounded by the readback buffers (workers + 2): when all
    are taken, ``step()`` waits for a worker, so memory stays flat however fast
    the GPU draws.  ``done`` counts frames drawn; ``written`` those on disk.
    """

    def __init__(self, scene, frames: tuple[int, int] | None = None, workers: int | None = None,
                 **writer_options):
        """``writer_options``: FrameWriter's ``nice`` and ``exr_pool`` (benchmarks compare them)."""
        self.frame_before = scene.frame_current  # restored by close()
        self.clock = clock = StageClock()  # per-stage seconds: set-up and main thread here, workers too below
        started = time.perf_counter()
        try:
            host = BlenderHost()
            started = clock.add("set-up: GPU context", started)
            self.plan = plan_bake(scene, host, frames)
            self.format = frame_format(scene)
            started = clock.add("set-up: checks", started)
            with ThreadPoolExecutor(1, thread_name_prefix="gpu_particles_display") as pool:
                gpu_display = self.format.gpu_display
                building = (pool.submit(display_shader, gpu_display, display_cache(gpu_display))
                            if gpu_display is not None else None)
                self.renderer = SceneRenderer(scene, self.plan.width, self.plan.height, host, exact_sort=True,
                                              cache="WRITE", snapshot=self.plan.snapshot)
                self.preroll = self.renderer.prepare(self.plan.frames[0])
                self.warnings: list[str] = []  # every warning of the bake once, in the order found (the sidecar's)
                self.note_warnings(self.renderer.frame_warnings)  # the births lost are read once, at the end
                started = clock.add("set-up: renderer", started)
                display = _display_result(building)
                started = clock.add("set-up: display transform (waited for)", started)
                self.readback = FrameReadback(host, self.plan.width, self.plan.height, self.format.readback,
                                              display=display)
                started = clock.add("set-up: readback", started)
        except (NoGPUError, GPUMemoryError, ShaderCompileError, SettingsError, ValueError, CacheError) as error:
            raise BakeError(str(error)) from None
        self.scene = scene
        self.frames = list(self.plan.frames)
        self.done = 0
        self.overflow = {}  # frame -> overflowing adds (the operator warns)
        self.emax = []  # Emax each frame used (follows the frames in AUTO mode)
        self.started = time.perf_counter()
        try:
            self.writer = FrameWriter(self.format, workers, clock=clock, **writer_options)
        except Exception as error:  # ValueError, PyOpenColorIO.Exception: a display, view or look the config lacks
            raise BakeError(f"Color management cannot be applied to PNG frames: {error}") from None
        clock.add("set-up: writers", started)
        self._buffers = [self.readback.buffer() for _ in range(self.writer.workers + 2)]
        # Extra files in flight, as many as frames: their captures (a particle state a frame) wait in memory.
        self._extra_slots = threading.Semaphore(self.writer.workers + 2)
        self._free = queue.SimpleQueue()
        for buffer in self._buffers:
            self._free.put(buffer)
        # Two copies of the stats in flight when they may wait for the frame's readback (_store_stats); none
        # if making them turned the host's readback without waiting off (a driver that maps no buffer).
        compositor = self.renderer.compositor
        self._stats_buffers = [host.readback_buffer(compositor.stats) for _ in range(2 * compositor.stats_can_wait)]
        if not compositor.stats_can_wait:
            for buffer in self._stats_buffers:
                host.free_readback_buffer(buffer)
            self._stats_buffers = []
        self._drawn = None  # (frame, readback.PendingFrame, stats buffer or None) drawn but not read yet

    @property
    def written(self) -> list[Path]:
        return self.writer.written

    @property
    def frames_finished(self) -> int:
        return len(self.writer.written)

    def step(self) -> int | None:
        """Draw one frame, read the previous one back and queue it; returns the frame drawn, or None
        after a piece of a long preroll.  The last step waits until every frame is on disk."""
        if not self.preroll.finished:
            started = time.perf_counter()
            try:
                pending = self.preroll.step()
            except CacheError as error:
                raise BakeError(str(error)) from None
            self.clock.add("preroll", started)
            if pending:
                return None
        frame = self.frames[self.done]
        self.emax.append(self.renderer.compositor.emax)
        started = time.perf_counter()
        try:
            self.renderer.draw(frame)
        except (SettingsError, CacheError) as error:  # e.g. a CSG primitive animated to a zero size, a full disk
            raise BakeError(f"Frame {frame}: {error}") from None
        self.note_warnings(self.renderer.frame_warnings)
        started = self.clock.add("draw", started)
        stats = self._store_stats(frame)
        started = self.clock.add("stats", started)
        buffer = self._free_buffer()
        started = self.clock.add("wait for a writer", started)
        pending = self.readback.store(self.renderer.resources.frame, buffer)
        self.clock.add("draw", started)
        self._read_drawn()
        self._submit_extras(frame)  # after the frame before is read: this waits for the one drawn now
        self._drawn = (frame, pending, stats)
        self.done += 1
        if self.finished:
            self._read_drawn()
        self._collect(wait=self.finished)
        return frame

    def _submit_extras(self, frame: int) -> None:
        """Capture what the frame's extra files need (a readback: the particle state before the next frame moves it)
        and queue their writing."""
        frame_path = output_path(self.scene, frame)
        for extra in self.plan.extras:
            started = time.perf_counter()
            while not self._extra_slots.acquire(timeout=0.05):
                self._collect()  # a failed write is reported rather than waited on
            started = self.clock.add("wait for a writer", started)
            try:
                captured = extra.capture(self.renderer, frame)
            except SettingsError as error:  # e.g. a VDB voxel size past the voxel limit: nothing written
                self._extra_slots.release()
                raise BakeError(f"Frame {frame}'s {extra.label}: {error}") from None
            self.clock.add(f"{extra.label}: capture", started)
            self.writer.submit_file(frame, extra_path(frame_path, extra),
                                    lambda partial, write=extra.write, captured=captured: write(partial, captured),
                                    extra.label, release=self._extra_slots.release)

    def _finish_extras(self) -> None:
        """Each extra's ``finish`` (a file naming the whole sequence), once its frames are on disk."""
        for extra in self.plan.extras:
            if extra.finish is not None and self.writer.files.get(extra.label):
                try:
                    extra.finish(self.scene, lambda frame, extra=extra: extra_path(output_path(self.scene, frame), extra))
                except OSError as error:
                    self.note_warnings([f"Could not write the {extra.label}'s sequence file: {error}"])

    def _store_stats(self, frame: int):
        """The drawn frame's overflows: where they may wait (``stats_can_wait``), their copy is queued into a
        stats buffer, returned, and read with the frame a step later (the GPU draws the next frame
        meanwhile; measured: bench/results/nvidia-h100-80gb-hbm3-pcie-sse2-2026-11-25-bake.json).  Else they are read now, waiting asleep for the
        drawing (the writers keep every core), before the frame's readback is queued (not waiting for that
        copy as well)."""
        if self._stats_buffers:
            buffer = self._stats_buffers[self.done % len(self._stats_buffers)]
            self.renderer.compositor.store_stats(buffer)
            return buffer
        self.renderer.host.sleep_until_idle()
        self.renderer.take_stats()
        self._note_overflow(frame, self.renderer.frame_stats)
        return None

    def note_warnings(self, warnings) -> None:
        """Keep each warning once, however many frames give it."""
        self.warnings += [warning for warning in dict.fromkeys(warnings) if warning not in self.warnings]

    def _note_overflow(self, frame: int, stats) -> None:
        if stats.overflow:
            self.overflow[frame] = stats.overflow

    def _read_drawn(self) -> None:
        """Read the frame drawn last (stored into a free buffer), and its stats if they waited, and queue it
        for writing."""
        if self._drawn is None:
            return
        frame, pending, stats = self._drawn
        self._drawn = None
        started = time.perf_counter()
        try:
            pixels = self.readback.read(pending)
            if stats is not None:
                self._note_overflow(frame, self.renderer.compositor.stored_stats(stats))
        except RuntimeError as error:  # hosts/gl_readback.py: the driver failed the copy
            raise BakeError(f"Frame {frame}: {error}") from None
        self.clock.add("readback", started)
        self.writer.submit(frame, output_path(self.scene, frame), pixels,
                           release=lambda: self._free.put(pending.buffer))

    def _free_buffer(self):
        while True:
            try:
                return self._free.get(timeout=0.05)
            except queue.Empty:
                self._collect()  # a failed write is reported rather than waited on

    def _collect(self, wait: bool = False) -> None:
        try:
            self.writer.collect(wait)
        except FrameWriteError as error:
            raise BakeError(str(error)) from None

    def close(self, cancelled: bool = False) -> Path | None:
        """Write every frame drawn (a cancelled bake too), wait for the writers, restore the scene's frame,
        write the JSON sidecar."""
        if self.scene.frame_current != self.frame_before:
            self.scene.frame_set(self.frame_before)
        if self._drawn is not None and not self.writer.failed:
            try:
                self._read_drawn()
            except BakeError:
                pass  # already reported by the step that failed
        self.writer.close()
        if not self.writer.failed:
            self._finish_extras()
        for buffer in self._buffers:  # every writer is done with them
            self.readback.free(buffer)
        for buffer in self._stats_buffers:
            self.renderer.host.free_readback_buffer(buffer)
        self._buffers.clear()
        self._stats_buffers.clear()
        self.note_warnings(self.renderer.simulation.spawn_overflows())  # lost births so far: one readback a bake
        self.note_warnings(self.renderer.simulation.neighbour_overflows())  # neighbours left out so far
        if self.overflow:
            self.note_warnings([f"{sum(self.overflow.values()):,} particle adds overflowed in {len(self.overflow)} "
                                "frame(s): raise Emax or use Auto Emax"])
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
            "lens": lens_summary(self.scene),  # Blender's motion blur and depth of field, as applied
            "emax": self.emax,
            "overflow": {str(frame): count for frame, count in self.overflow.items()},
            "warnings": self.warnings,
            "effects": [{"object": name, **as_dict(settings)} for name, settings in self.renderer.effects],
            "files": [p.name for p in self.written],
            "extra_files": {label: [str(p.relative_to(self.plan.output_dir)) for p in paths]
                            for label, paths in self.writer.files.items()},
            "last_frame": self.renderer.stats(),
            "cache": self.renderer.cache_record(),
            "stages": {stage: round(seconds, 4) for stage, seconds in self.clock.seconds.items()},
            "kernel_compilation": {"kernels": self.renderer.host.compiled,  # inside the stages above
                                   "seconds": round(self.renderer.host.compile_seconds, 4)},
        }
        partial = sidecar.with_name(f".{sidecar.name}.partial")  # whole or absent, as the frames
        partial.write_text(json.dumps(record, indent=2) + "\n")
        os.replace(partial, sidecar)
        return sidecar



def _display_result(display):
    """The GPU display transform being built (None: the frame is not converted on the GPU)."""
    if display is None:
        return None
    try:
        return display.result()
    except Exception as error:  # ValueError, PyOpenColorIO.Exception: a display, view or look the config lacks
        raise BakeError(f"Color management cannot be applied to PNG frames: {error}") from None
