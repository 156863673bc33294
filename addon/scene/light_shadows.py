"""The scene's shadows on the particles: depth maps of the occluders from each shadow slot's light.

Blender glue for :class:`addon.engine.light.shadow_volume.OccluderMaps`: the meshes the depth pre-pass draws
(``depth_prepass.py``: its occluders, kept triangles and depth-only shader) drawn again from each light into
one tile of a DEPTH32F atlas; the shadow volume's march compares every voxel with them (3x3 taps, soft).
A sun's map is orthographic over the occluders' extent across its direction (a particle beside it has no
occluder between it and the sun), a spot's a perspective of its cone, a point or area light's a perspective
frustum from the light around the occluders' bounding sphere.  Not done: a point or area light among the
occluders (inside their bounding sphere) would need a cube map; such a light gets no scene shadow.
"""

from __future__ import annotations

import gpu
import numpy as np

from ..engine.draw.depth import DEPTH_PREPASS
from ..engine.light.shadow_volume import MAX_SHADOW_SLOTS, OccluderMaps
from ..hosts.blender import shader_info
from .depth_prepass import draw_depths, mesh_triangles, occluders

TILE = 1024  # texels a side of each light's map


def _look_along(eye, forward) -> np.ndarray:
    """World to a view at ``eye`` looking along ``forward`` (OpenGL: -Z forward)."""
    forward = np.asarray(forward, np.float64) / np.linalg.norm(forward)
    up = np.array([0.0, 0.0, 1.0]) if abs(forward[2]) < 0.99 else np.array([0.0, 1.0, 0.0])
    right = np.cross(forward, up)
    right /= np.linalg.norm(right)
    view = np.identity(4)
    view[:3, :3] = (right, np.cross(right, forward), -forward)
    view[:3, 3] = -view[:3, :3] @ np.asarray(eye, np.float64)
    return view


def _orthographic(low, high) -> np.ndarray:
    """View-space box (low, high: x, y, z with z negative ahead) to clip space (OpenGL's glOrtho: the highest z,
    nearest the light, at depth 0)."""
    scale = 2 / (np.asarray(high, np.float64) - low) * (1, 1, -1)
    center = (np.asarray(high, np.float64) + low) / 2
    return np.array([[scale[0], 0, 0, -center[0] * scale[0]], [0, scale[1], 0, -center[1] * scale[1]],
                     [0, 0, scale[2], -center[2] * scale[2]], [0, 0, 0, 1]])


def _perspective(angle: float, near: float, far: float) -> np.ndarray:
    focal = 1.0 / np.tan(angle / 2)
    return np.array([[focal, 0, 0, 0], [0, focal, 0, 0],
                     [0, 0, (far + near) / (near - far), 2 * far * near / (near - far)], [0, 0, -1, 0]])


def light_view_proj(light, corners: np.ndarray) -> np.ndarray | None:
    """World to the light's clip space covering the occluders (``corners``: their bounding boxes' corners,
    (n, 3) world), or None where no map can (a point or area light among them)."""
    center = corners.mean(axis=0)
    if light.type == "SUN":
        view = _look_along(center, light.direction)
        local = corners @ view[:3, :3].T + view[:3, 3]
        margin = 1e-3 * (np.ptp(local, axis=0).max() + 1e-6)
        return _orthographic(local.min(axis=0) - margin, local.max(axis=0) + margin) @ view
    position = np.asarray(light.position, np.float64)
    if light.type == "SPOT":
        view = _look_along(position, light.direction)
        angle = min(float(light.spot_size), np.radians(179.0))
    else:
        radius = np.linalg.norm(corners - center, axis=1).max()
        distance = np.linalg.norm(center - position)
        if distance <= radius * 1.001:
            return None
        view = _look_along(position, center - position)
        angle = 2 * np.arcsin(radius / distance)
    ahead = -(corners @ view[:3, :3].T + view[:3, 3])[:, 2]
    far = max(ahead.max(), 1e-3) * 1.01
    return _perspective(angle, max(ahead.min() * 0.99, far * 1e-4), far) @ view


def box_corners(meshes, models) -> np.ndarray:
    """The world corners of every occluder's bounding box, (8 x occluders, 3)."""
    corners = []
    for (positions, triangles), model in zip(meshes, models):
        if len(triangles):
            low, high = positions.min(axis=0), positions.max(axis=0)
            box = np.array([[(low, high)[(k >> axis) & 1][axis] for axis in range(3)] for k in range(8)])
            corners.append(box @ np.asarray(model)[:3, :3].T + np.asarray(model)[:3, 3])
    return np.concatenate(corners) if corners else np.zeros((0, 3))


def scene_occluders(scene, depsgraph, kept=None) -> tuple[list, np.ndarray]:
    """Every occluder's (positions, triangles) and world matrix, as the depth pre-pass reads them."""
    if kept is not None:
        return kept.occluders(scene, depsgraph)
    found = list(occluders(scene, depsgraph, shadows=True))
    return [mesh_triangles(obj) for obj in found], np.array([obj.matrix_world for obj in found]).reshape(-1, 4, 4)


class LightShadowMaps:
    """The atlas of the shadow slots' occluder depth maps, drawn per frame."""

    def __init__(self, host, tile: int = TILE):
        self.host = host
        self.tile = tile
        self.depth = host.texture("occluder_depth", tile * MAX_SHADOW_SLOTS, tile, "DEPTH32F")
        self.shader = gpu.shader.create_from_info(shader_info(gpu, DEPTH_PREPASS))

    def draw(self, meshes, models, lights) -> OccluderMaps | None:
        """Each shadow slot's map of ``meshes`` (positions, triangles) at ``models``; None without occluders
        or shadowed lights (the march then skips the comparison)."""
        corners = box_corners(meshes, models)
        matrices = [None] * MAX_SHADOW_SLOTS
        for light in lights:
            if 0 <= getattr(light, "shadow_slot", -1) < MAX_SHADOW_SLOTS and len(corners):
                matrices[light.shadow_slot] = light_view_proj(light, corners)
        if all(matrix is None for matrix in matrices):
            return None
        views = [((slot * self.tile, 0, self.tile, self.tile), matrix)
                 for slot, matrix in enumerate(matrices) if matrix is not None]
        draw_depths(self.shader, self.host.framebuffer(None, self.depth), meshes, models, views)
        return OccluderMaps(self.depth, tuple(matrices))
