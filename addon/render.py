"""Scene to frames: the engine driven by a Blender scene's objects and camera.

Simulation follows the scene frame: stepping forward one frame advances every
effect by one frame; any other jump re-simulates deterministically from the
start frame (with each effect's preroll).
"""

from __future__ import annotations

import numpy as np

from .csg_ui import scene_cloud
from .engine.compositing import Camera, Compositor
from .engine.pipeline import advance, composite
from .engine.simulation import ParticleSystem
from .engine.sorting import EffectSort
from .engine.sprites import SpriteLayer
from .hosts.blender import BlenderHost
from .properties import effect_settings_of, render_settings_of, scene_effects


def scene_seconds_per_frame(scene) -> float:
    return scene.render.fps_base / scene.render.fps


def camera_of(scene, width: int, height: int) -> Camera:
    """The scene camera's world-to-clip matrix for a width x height target."""
    camera = scene.camera
    depsgraph = scene.view_layers[0].depsgraph if scene.view_layers else None
    projection = camera.calc_matrix_camera(
        depsgraph, x=width, y=height, scale_x=scene.render.pixel_aspect_x, scale_y=scene.render.pixel_aspect_y
    )
    view = camera.matrix_world.inverted()
    return Camera(np.array(projection) @ np.array(view), width, height)


class SceneRenderer:
    """Every enabled effect of a scene on the GPU, composited from the scene camera."""

    def __init__(self, scene, width: int, height: int, host=None, exact_sort: bool = False):
        self.scene = scene
        self.exact_sort = exact_sort  # bakes sort exactly every frame; the viewport sorts incrementally
        self.host = host or BlenderHost()
        self.width, self.height = width, height
        self.effects = [(obj.name, effect_settings_of(effect)) for obj, effect in scene_effects(scene)]
        self.systems = [ParticleSystem(self.host, settings) for _, settings in self.effects]
        self.compositor = Compositor(self.host, width, height, render_settings_of(scene))
        self.cloud = scene_cloud(scene, self.host)  # the CSG point cloud, None without primitives
        self.cloud_warnings = []
        self.sorts = [EffectSort(system) for system in self.systems]
        self.sprites = None  # made when an effect first draws in Alpha mode
        self.frame = None
        self.matrices = []
        self.overflow = 0

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
        for sort in self.sorts:
            sort.reset()
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
        view = np.array(self.scene.camera.matrix_world.inverted())
        for sort in self.sorts:
            sort.update(view, exact=self.exact_sort)
        if self.sprites is None and any(system.settings.blend_mode == "ALPHA" for system in self.systems):
            self.sprites = SpriteLayer(self.host, self.width, self.height)
        systems, orders = list(self.systems), [sort.indices for sort in self.sorts]
        if self.cloud is not None:
            seconds = (frame - self.scene.frame_start) * scene_seconds_per_frame(self.scene)
            self.cloud_warnings = self.cloud.follow(self.scene, seconds)
            systems.append(self.cloud.points)
            orders.append(None)
        frame_pixels = composite(systems, self.compositor, camera_of(self.scene, self.width, self.height),
                                 self.sprites, orders)
        self.overflow = self.compositor.take_overflow_count()
        return frame_pixels

    def stats(self) -> dict:
        """Counts read back from the GPU: a sync, so once per bake rather than per frame."""
        return {
            "live_particles": [system.live.read_count() for system in self.systems],
            "csg_samples": self.cloud.cloud.read_count() if self.cloud is not None else None,
            "csg_warnings": self.cloud_warnings,
            # Per effect: (adjacent pairs in order, sampled Kendall tau) of its drawing order; None: unsorted.
            "sortedness": [sort.sortedness() for sort in self.sorts],
        }
