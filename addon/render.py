"""Scene to frames: the engine driven by a Blender scene's objects and camera.

Simulation follows the scene frame: stepping forward one frame advances every
effect by one frame; any other jump re-simulates deterministically from the
start frame (with each effect's preroll).
"""

from __future__ import annotations

import math

import numpy as np

from .csg_ui import scene_cloud
from .depth_prepass import DepthPrepass
from .engine.compositing import Camera, Compositor
from .engine.depth import SceneDepth
from .engine.pipeline import advance, composite
from .engine.settings import SettingsError
from .engine.simulation import ParticleSystem
from .hosts.blender import BlenderHost
from .properties import effect_settings_of, render_settings_of, scene_effects


def scene_seconds_per_frame(scene) -> float:
    return scene.render.fps_base / scene.render.fps


def check_camera(camera) -> None:
    """A clear error for a camera the splat cannot project through."""
    if camera is None:
        raise SettingsError("The scene has no camera: add one and make it the scene camera")
    if camera.type != "CAMERA":
        raise SettingsError(f"The scene camera '{camera.name}' is a {camera.type.lower()}, not a camera")
    data = camera.data
    if data.type == "ORTHO" and not data.ortho_scale > 0:
        raise SettingsError(f"Camera '{camera.name}' has an orthographic scale of {data.ortho_scale}: it must be positive")
    if not (data.sensor_width > 0 and data.sensor_height > 0 and data.lens > 0):
        raise SettingsError(f"Camera '{camera.name}' has a zero-size sensor or lens: "
                            f"sensor {data.sensor_width}x{data.sensor_height} mm, lens {data.lens} mm")
    if not abs(camera.matrix_world.determinant()) > 1e-12:
        raise SettingsError(f"Camera '{camera.name}' is scaled to zero: its view cannot be inverted")


def camera_of(scene, width: int, height: int) -> Camera:
    """The scene camera's world-to-clip matrix for a width x height target."""
    camera = scene.camera
    check_camera(camera)
    depsgraph = scene.view_layers[0].depsgraph if scene.view_layers else None
    projection = camera.calc_matrix_camera(
        depsgraph, x=width, y=height, scale_x=scene.render.pixel_aspect_x, scale_y=scene.render.pixel_aspect_y
    )
    view = camera.matrix_world.inverted()
    view_proj = np.array(projection) @ np.array(view)
    if not all(math.isfinite(v) for v in view_proj.ravel()):
        raise SettingsError(f"Camera '{camera.name}' gives a non-finite projection for {width}x{height}")
    return Camera(view_proj, width, height)


class SceneRenderer:
    """Every enabled effect of a scene on the GPU, composited from the scene camera."""

    def __init__(self, scene, width: int, height: int, host=None):
        self.scene = scene
        self.host = host or BlenderHost()
        self.width, self.height = width, height
        self.effects = [(obj.name, effect_settings_of(effect)) for obj, effect in scene_effects(scene)]
        self.systems = [ParticleSystem(self.host, settings) for _, settings in self.effects]
        self.compositor = Compositor(self.host, width, height, render_settings_of(scene))
        if self.compositor.render.occlusion == "SCENE":
            self.prepass = DepthPrepass()
            self.compositor.use_depth(SceneDepth(self.host, width, height))
        else:
            self.prepass = None
        self.cloud = scene_cloud(scene, self.host)  # the CSG point cloud, None without primitives
        self.cloud_warnings = []
        self.frame = None
        self.matrices = []
        self.frame_stats = None  # FrameStats of the last rendered frame (overflows, peak)

    def _emitter_matrices(self):
        return [np.array(self.scene.objects[name].matrix_world) for name, _ in self.effects]

    def _restart(self):
        """Back to the start frame: reset every system and run its preroll there."""
        self.scene.frame_set(self.scene.frame_start)
        dt = scene_seconds_per_frame(self.scene)
        self.matrices = self._emitter_matrices()
        for system, matrix in zip(self.systems, self.matrices):
            system.reset()
            for _ in range(round(system.settings.preroll / dt)):
                system.step(dt, matrix, matrix)
            system.step(dt, matrix, matrix)
        self.frame = self.scene.frame_start

    def advance_to(self, frame: int) -> None:
        """Simulate up to ``frame`` (forward steps, or a restart when going back)."""
        if self.frame is None or frame < self.frame:
            self._restart()
        dt = scene_seconds_per_frame(self.scene)
        while self.frame < frame:
            self.frame += 1
            self.scene.frame_set(self.frame)
            current = self._emitter_matrices()
            advance(self.systems, dt, self.matrices, current)
            self.matrices = current
        if self.scene.frame_current != frame:
            self.scene.frame_set(frame)

    def render(self, frame: int) -> np.ndarray:
        """The linear RGBA float frame (height, width, 4), rows bottom to top."""
        self.advance_to(frame)
        camera = camera_of(self.scene, self.width, self.height)
        if self.prepass is not None:
            depsgraph = self.scene.view_layers[0].depsgraph if self.scene.view_layers else None
            self.prepass.draw(self.scene, depsgraph, camera.view_proj, self.compositor.depth)
        systems = list(self.systems)
        if self.cloud is not None:
            seconds = (frame - self.scene.frame_start) * scene_seconds_per_frame(self.scene)
            self.cloud_warnings = self.cloud.follow(self.scene, seconds)
            systems.append(self.cloud.points)
        frame_pixels = composite(systems, self.compositor, camera)
        self.frame_stats = self.compositor.take_stats()
        return frame_pixels

    def stats(self) -> dict:
        """Counts read back from the GPU: a sync, so once per bake rather than per frame."""
        return {
            "live_particles": [system.live.read_count() for system in self.systems],
            "csg_samples": self.cloud.cloud.read_count() if self.cloud is not None else None,
            "csg_warnings": self.cloud_warnings,
        }
