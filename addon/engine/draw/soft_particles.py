"""Soft particles: alpha sprites fade where they meet the scene's opaque depth, instead of cutting a hard line.

A sprite at a pixel is multiplied by ``clamp((scene distance - sprite distance) / soft_distance, 0, 1)``,
distances along the camera axis in scene units (RenderSettings.soft_distance; 0: off, no kernel changes).
Both depths are window depths (0 near .. 1 far): the sprite's footprint depth and the scene's from the
depth pre-pass (``scene/depth_prepass.py``), which the viewport, the bake and the final render's particle
layer all draw, so one fade serves the three.  ``soft_depth`` folds the camera's projection and the
distance into one rational map of window depth, so the kernel does one division per depth::

    soft_view(d) = (a d + b) / (c d + e)       # distance along the camera axis over soft_distance (+ a constant)
    fade = clamp(soft_view(scene) - soft_view(sprite), 0, 1)      # soft_particles.glsl
"""

from __future__ import annotations

import numpy as np

from ..seam.kernels import Constant

SOFT_DEPTH = Constant("VEC4", "soft_depth", components=(  # soft_view(d) = numerator . (d, 1) / denominator . (d, 1)
    ("soft_numerator", "xy"), ("soft_denominator", "zw")))


def soft_depth(view_proj: np.ndarray, distance: float) -> tuple[float, float, float, float]:
    """SOFT_DEPTH of a camera's world-to-clip matrix (OpenGL conventions) and a fade distance > 0.

    Perspective: clip z = alpha clip w + beta (rows 2 and 3 of every perspective view_proj), so the
    distance w of window depth d (ndc 2 d - 1) is beta / (2 d - 1 - alpha).  Orthographic (clip w = 1):
    ndc is affine in the distance, 2 d / |row 2| plus a constant, which the difference drops."""
    view_proj = np.asarray(view_proj, np.float64)
    r2, r3 = view_proj[2], view_proj[3]
    axis2 = float(r3[:3] @ r3[:3])
    if axis2 > 0.0:
        alpha = float(r2[:3] @ r3[:3]) / axis2
        beta = float(r2[3] - alpha * r3[3])
        return 0.0, 0.5 * beta / distance, 1.0, -0.5 * (1.0 + alpha)
    return 2.0 / (float(np.linalg.norm(r2[:3])) * distance), 0.0, 0.0, 1.0
