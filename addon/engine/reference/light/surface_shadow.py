"""numpy reference of shaders/surface_shadow.glsl: the darkening of the scene's surfaces under the particles.

The same steps as the kernel (surface_shadow.py states them), in float64 from window depths; the volume is
read through ``shadow_volume.trilinear`` as the texture unit filters it (the tests compare within its
filtering weights and the half floats of the transmittance).
"""

from __future__ import annotations

import math

import numpy as np

from ...look.lighting import SceneLights, irradiance
from .shadow_volume import trilinear

LUMINANCE = np.array([0.2126, 0.7152, 0.0722])


def unproject(clip_to_world, width: int, height: int, x, y, depth) -> np.ndarray:
    """(..., 3) world positions at pixels (x, y) and window depths."""
    ndc = np.stack([(np.asarray(x) + 0.5) / width * 2 - 1, (np.asarray(y) + 0.5) / height * 2 - 1,
                    np.asarray(depth, np.float64) * 2 - 1, np.ones(np.shape(depth))], axis=-1)
    world = ndc @ np.asarray(clip_to_world, np.float64).T
    return world[..., :3] / world[..., 3:]


def _steps(depth, world, clip_to_world, axis: int) -> np.ndarray:
    """Each pixel's step to its neighbour along ``axis`` (1: x, 0: y) on the same surface (the nearer depth)."""
    height, width = depth.shape
    y, x = np.indices(depth.shape)
    result = np.zeros(world.shape)
    sides = []
    for sign in (1, -1):
        ny, nx = (y + sign, x) if axis == 0 else (y, x + sign)
        inside = (ny >= 0) & (ny < height) & (nx >= 0) & (nx < width)
        nd = np.where(inside, depth[ny.clip(0, height - 1), nx.clip(0, width - 1)], 1.0)
        sides.append((nd < 1.0, nd, sign * (unproject(clip_to_world, width, height, nx, ny, nd) - world)))
    (has_ahead, ahead_depth, ahead), (has_behind, behind_depth, behind) = sides
    use_ahead = has_ahead & (~has_behind | (np.abs(ahead_depth - depth) <= np.abs(behind_depth - depth)))
    result[use_ahead] = ahead[use_ahead]
    use_behind = ~use_ahead & has_behind
    result[use_behind] = behind[use_behind]
    return result


def bspline(transmittance, cells) -> np.ndarray:
    """(n, 4) cubic B-spline filtered transmittance at (n, 3) cells, from 8 trilinear taps as the kernel."""
    f = np.asarray(cells, np.float64) - 0.5
    base = np.floor(f)
    a = f - base
    w0, w1, w3 = (1 - a) ** 3 / 6, (4 - 6 * a * a + 3 * a ** 3) / 6, a ** 3 / 6
    w2 = 1 - w0 - w1 - w3
    g0, g1 = w0 + w1, w2 + w3
    taps = (base - 0.5 + w1 / g0, base + 1.5 + w3 / g1)  # in cells, as trilinear takes them (centers at + 0.5)
    total = 0.0
    for corner in range(8):
        high = np.array([corner & 1, (corner >> 1) & 1, corner >> 2], bool)
        at = np.where(high, taps[1], taps[0])
        weights = np.where(high, g1, g0).prod(axis=1)
        total = total + weights[:, None] * trilinear(transmittance, at)
    return total


def surface_transmittance(light, points, transmittance, grid) -> np.ndarray:
    """(n,) transmittance from ``points`` toward ``light`` (its shadow slot) where the ray enters the grid."""
    size = np.array(transmittance.shape[2::-1], np.float64)
    if light.type == "SUN":
        toward = -np.broadcast_to(np.asarray(light.direction, np.float64), points.shape)
        reach = np.full(len(points), 1e30)
        direction = toward / np.linalg.norm(toward, axis=1, keepdims=True)
    else:
        toward = np.asarray(light.position, np.float64) - points
        reach = np.linalg.norm(toward, axis=1)
        direction = toward / np.maximum(reach, 1e-30)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        inverse = 1.0 / direction
        low = (grid[:3] - points) * inverse
        high = (grid[:3] + size * grid[3] - points) * inverse
    near, far = np.nan_to_num(np.minimum(low, high), nan=-np.inf), np.nan_to_num(np.maximum(low, high), nan=np.inf)
    enter = np.maximum(near.max(axis=1), 0.0)
    leave = np.minimum(far.min(axis=1), reach)
    hit = (enter <= leave) & (reach > 0)
    result = np.ones(len(points))
    cells = np.clip((points[hit] + direction[hit] * enter[hit, None] - grid[:3]) / grid[3], 0.0, size)
    result[hit] = np.clip(bspline(transmittance, cells)[:, light.shadow_slot], 0.0, 1.0)
    return result


def darkening(depth, clip_to_world, lights: SceneLights, transmittance, grid) -> np.ndarray:
    """(height, width) darkening 1 - factor of each pixel of the window ``depth`` (rows bottom first)."""
    depth = np.asarray(depth, np.float64)
    height, width = depth.shape
    result = np.zeros(depth.shape)
    if not grid[3] > 0:
        return result
    y, x = np.indices(depth.shape)
    world = unproject(clip_to_world, width, height, x, y, depth)
    normal = np.cross(_steps(depth, world, clip_to_world, 1), _steps(depth, world, clip_to_world, 0))
    to_camera = unproject(clip_to_world, width, height, x, y, np.zeros(depth.shape)) - world
    length = np.linalg.norm(normal, axis=-1, keepdims=True)
    facing = to_camera / np.linalg.norm(to_camera, axis=-1, keepdims=True)
    normal = np.where(length > 0, normal / np.where(length > 0, length, 1), facing)
    normal = np.where(np.einsum("...i,...i", normal, to_camera)[..., None] < 0, -normal, normal)
    surface = depth < 1.0
    points, normals = world[surface], normal[surface]
    lit = np.broadcast_to(np.asarray(lights.ambient, np.float64), points.shape).copy()
    shadowed = lit.copy()
    for light in lights.lights:
        e, travel = irradiance(light, points)
        share = e * (np.maximum(-np.einsum("ij,ij->i", travel, normals), 0.0) / math.pi)[:, None]
        lit += share
        shadow = surface_transmittance(light, points, transmittance, grid)[:, None] if light.shadow_slot >= 0 else 1.0
        shadowed += share * shadow
    whole = lit @ LUMINANCE
    with np.errstate(divide="ignore", invalid="ignore"):
        result[surface] = np.where(whole > 0, np.clip(1 - (shadowed @ LUMINANCE) / whole, 0.0, 1.0), 0.0)
    return result
