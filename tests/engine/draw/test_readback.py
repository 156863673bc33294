"""frame_out and frame_out_half (addon/engine/draw/readback.py) against reference/draw/readback.py, on edge values.

Both are copies (a flip, and a cast to half floats), so they are held to the reference bit for bit: every
float32 bit pattern the frame holds (NaN payloads aside: only NaN-ness is compared) comes back as it was,
and every half float is the IEEE round-to-nearest-even of its value.
"""

import numpy as np
import pytest

from addon.engine.draw.readback import FLOAT_RGBA, HALF_RGBA, FrameReadback
from addon.engine.reference.draw import readback as ref

WIDTH, HEIGHT = 19, 7  # not a multiple of the 16x16 workgroups: edge groups overhang the frame
HALF_MAX = 65504.0
EDGES = np.array([
    0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan,
    HALF_MAX, -HALF_MAX, 65519.0, 65520.0, -65520.0, 1e6, 3.4e38,  # half's largest, the last below overflow, over
    2.0**-14, 2.0**-24, 2.0**-25, 1.5 * 2.0**-25, 2.0**-26, 1e-30, -1e-30, 1e-40, -1e-40,  # subnormals, under
    1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11, 2049.0, 2051.0, 0.1, -1234.567,  # ties to even, and inexact ones
], np.float32)


def edge_frame(rng):
    """Every edge value at least once, the rest random of either sign over many binades; rows bottom first."""
    values = rng.standard_normal(HEIGHT * WIDTH * 4).astype(np.float32) * np.float32(2.0) ** rng.integers(
        -30, 20, HEIGHT * WIDTH * 4).astype(np.float32)
    values[:EDGES.size] = EDGES
    return rng.permutation(values).reshape(HEIGHT, WIDTH, 4)


def read_back(host, frame, layout):
    readback = FrameReadback(host, WIDTH, HEIGHT, layout)
    texture = host.texture("frame", WIDTH, HEIGHT, "RGBA32F", frame)
    return readback.read(readback.store(texture, readback.buffer()))


def assert_same_bits(got, want):
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    bits = f"uint{8 * want.itemsize}"
    np.testing.assert_array_equal(np.where(nan, 0, got.view(bits)), np.where(nan, 0, want.view(bits)))


def test_frame_out_flips_rows_and_keeps_every_value(host, rng):
    frame = edge_frame(rng)
    got = read_back(host, frame, FLOAT_RGBA)
    assert got.dtype == np.float32 and got.shape == (HEIGHT, WIDTH, 4)
    assert_same_bits(got, ref.frame_out(frame))


def test_frame_out_half_rounds_as_ieee(host, rng):
    frame = edge_frame(rng)
    got = read_back(host, frame, HALF_RGBA)
    want = ref.frame_out_half(frame)
    assert got.dtype == np.float16 and got.shape == (HEIGHT, WIDTH, 4)
    assert np.isinf(want).sum() > 4 and (want == HALF_MAX).any() and (want == 2.0**-24).any()
    assert_same_bits(got, want)


@pytest.mark.parametrize("value, half", [(HALF_MAX, HALF_MAX), (65519.0, HALF_MAX), (65520.0, np.inf),
                                         (-1e6, -np.inf), (2.0**-25, 0.0), (1.5 * 2.0**-25, 2.0**-24),
                                         (1.0 + 2.0**-11, 1.0), (1.0 + 3 * 2.0**-11, 1.0 + 2.0**-9)])
def test_half_edges(value, half):
    """The reference's own cases: half's largest, overflow from 65520 (half way to the next binade), the
    smallest subnormal's half way point rounding to even (zero), and ties to even among normals."""
    got = ref.frame_out_half(np.full((1, 1, 4), value, np.float32))
    np.testing.assert_array_equal(got, np.float16(half))
