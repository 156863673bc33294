"""Reference of the soft particles' fade (soft_particles.py, soft_particles.glsl), in float32."""

from __future__ import annotations

import numpy as np

F = np.float32


def soft_fade(sprite_depth, scene_depth, depth_map) -> np.ndarray:
    """soft_particles.glsl's fade in float32: sprites at window depth ``sprite_depth`` over ``scene_depth``."""
    x, y, z, w = (F(v) for v in depth_map)

    def view(d):
        d = np.asarray(d, F)
        return ((x * d + y) / (z * d + w)).astype(F)

    return np.clip(view(scene_depth) - view(sprite_depth), F(0), F(1)).astype(F)
