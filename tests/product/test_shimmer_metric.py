"""The shimmer metric's ingredients (bench/shimmer.py): band-limited shift back, 3x3 box, pairwise difference."""

import numpy as np
import pytest

from bench import shimmer


def wave(shift=0.0, size=(40, 64)):
    """A band-limited image (two sinusoids well under Nyquist) seen through a camera shifted by ``shift`` pixels."""
    y, x = np.mgrid[0:size[0], 0:size[1]].astype(np.float64)
    return 2.0 + np.sin(2 * np.pi * 3 * (x - shift) / size[1]) + np.cos(2 * np.pi * 2 * (y - shift) / size[0])


def test_whole_pixel_shift_back_is_a_roll(rng):
    image = rng.random((24, 40))
    np.testing.assert_allclose(shimmer.shift_back(image, 2.0), np.roll(image, (-2, -2), axis=(0, 1)), atol=1e-12)


@pytest.mark.parametrize("shift", shimmer.SHIFTS)
def test_band_limited_content_comes_back_unchanged(shift):
    np.testing.assert_allclose(shimmer.shift_back(wave(shift), shift), wave(), atol=1e-9)


def test_box_blur_keeps_flat_images_and_averages_neighbours():
    assert np.allclose(shimmer.box3(np.full((5, 7), 3.0)), 3.0)
    impulse = np.zeros((5, 5))
    impulse[2, 2] = 9.0
    blurred = shimmer.box3(impulse)
    assert np.allclose(blurred[1:4, 1:4], 1.0) and blurred.sum() == pytest.approx(9.0)


def test_no_aliasing_scores_zero_and_aliasing_does_not():
    value, per_shift = shimmer.shimmer([wave(s) for s in shimmer.SHIFTS])
    assert value < 1e-9 and max(per_shift) < 1e-9
    # Point samples snapped to whole pixels (the one-pixel splat's kind of error) shimmer.
    dots = []
    for s in shimmer.SHIFTS:
        image = np.zeros((40, 64))
        image[(np.arange(5, 35, 3) + int(s + 0.6)) % 40, (np.arange(5, 65, 6)[:10] + int(s + 0.6)) % 64] = 1.0
        dots.append(image)
    assert shimmer.shimmer(dots)[0] > 0.1
    with pytest.raises(ValueError, match="black"):
        shimmer.shimmer([np.zeros((40, 64))] * 4)
