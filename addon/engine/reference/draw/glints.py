"""Reference of glint_extract.glsl: the brightest qualifying pixel of each 8x8 tile.

Luminance in the kernel's float32 order (no fused multiply-add); a pixel
qualifies when its luminance is finite and above the threshold; the brightest
is the highest luminance, then the lowest offset (y * 8 + x) inside the tile.
"""

from __future__ import annotations

import numpy as np

from ...draw.glints import TILE, BrightPoints

F = np.float32


def luminance(rgb: np.ndarray) -> np.ndarray:
    r, g, b = (rgb[..., i].astype(F) for i in range(3))
    return (r * F(0.2126) + g * F(0.7152)) + b * F(0.0722)


def extract(frame: np.ndarray, threshold: float) -> BrightPoints:
    """``frame``: (height, width, 4) float32, rows bottom to top as the GPU stores them."""
    height, width = frame.shape[:2]
    tiles_y, tiles_x = -(-height // TILE), -(-width // TILE)
    padded = np.full((tiles_y * TILE, tiles_x * TILE), -np.inf, F)
    with np.errstate(invalid="ignore", over="ignore"):
        lum = luminance(frame[..., :3])
        qualifies = (lum > F(threshold)) & np.isfinite(lum)
    padded[:height, :width] = np.where(qualifies, lum, -np.inf)
    blocks = padded.reshape(tiles_y, TILE, tiles_x, TILE).transpose(0, 2, 1, 3).reshape(tiles_y, tiles_x, TILE * TILE)
    offset = blocks.argmax(axis=2)  # the first (lowest offset) of the highest luminance
    has = np.take_along_axis(blocks, offset[..., None], axis=2)[..., 0] > -np.inf
    ty, tx = np.nonzero(has)
    off = offset[ty, tx]
    x, y = tx * TILE + off % TILE, ty * TILE + off // TILE
    colors = np.concatenate([frame[y, x, :3].astype(F), lum[y, x, None]], axis=1)
    return BrightPoints(np.stack([x, y], axis=1).astype(np.int64), colors)
