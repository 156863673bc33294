"""Reference of frame_out.glsl (readback.py): the frame with its rows top first, as float32 or half floats.

``frame_display`` (OpenColorIO's view transform) has no numpy reference:
tests/output/test_display_shader.py holds it to OpenColorIO's own CPU processor.
"""

from __future__ import annotations

import numpy as np


def frame_out(frame) -> np.ndarray:
    """FRAME_OUT: (height, width, 4) float32, rows top first (the frame's are bottom first), values unchanged."""
    return np.asarray(frame, np.float32)[::-1].copy()


def frame_out_half(frame) -> np.ndarray:
    """FRAME_OUT_HALF as FrameReadback reads it: (height, width, 4) float16, rows top first; packHalf2x16
    rounds to nearest even, beyond 65504 (from 65520 on) to infinity, keeping NaN, infinities and signs."""
    with np.errstate(over="ignore"):
        return frame_out(frame).astype(np.float16)
