"""Reference of coarse_depth.glsl: the scene depth's range per tile, which the splat tests first.

(depth_prepass.glsl draws Blender's meshes; its depth is the GPU rasterizer's and has no reference here.)
"""

from __future__ import annotations

import numpy as np

from ...draw.depth import TILE

F = np.float32


def coarse_depth(scene_depth, tile=TILE):
    """(min, max) depth per tile x tile block, partial blocks at the edges included."""
    height, width = scene_depth.shape
    rows, cols = -(-height // tile), -(-width // tile)
    low = np.ones((rows * tile, cols * tile), F)
    high = np.zeros((rows * tile, cols * tile), F)
    low[:height, :width] = high[:height, :width] = scene_depth
    blocks = (rows, tile, cols, tile)
    return low.reshape(blocks).min(axis=(1, 3)), high.reshape(blocks).max(axis=(1, 3))
