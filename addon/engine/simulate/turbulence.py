"""The turbulence volume: a tiling, divergence-free (curl) noise field.

Sylvan's thesis (see README) sampled a small 3D texture of random forces
with an animated offset.  Curl noise makes that field swirl without sources or sinks, so
particles stir instead of bunching up.  The potential is a sum of a few
periodic sine waves with integer wave vectors; its curl is taken
analytically, so the field is exactly divergence-free and tiles seamlessly.
It is computed once per effect at set-up (numpy, vectorised) from the
effect's seed and uploaded as a 3D texture that the simulate kernel samples
with a manual trilinear fetch (see ``sample_noise`` in simulate.glsl).
"""

from __future__ import annotations

import numpy as np

from ..settings.settings import SettingsError

NOISE_MODES = 24  # sine waves per potential component
MAX_WAVE_NUMBER = 3  # waves per tile along an axis: the field's largest swirl is a third of a tile


def curl_noise(resolution: int, seed: int) -> np.ndarray:
    """(n, n, n, 4) float32 volume indexed [z, y, x]; xyz: unit-RMS curl field, w: 0.

    Potential component c is a sum of sin(2 pi k . x + phase) over integer wave
    vectors k; the curl of sin(...) e_c is 2 pi cos(...) (k x e_c), summed in
    float32 one wave at a time (memory stays at the volume's own size)."""
    n = resolution
    rng = np.random.default_rng(seed)
    waves = rng.integers(-MAX_WAVE_NUMBER, MAX_WAVE_NUMBER + 1, size=(3, NOISE_MODES, 3))
    waves[np.all(waves == 0, axis=-1)] = (1, 0, 0)
    phases = rng.uniform(0.0, 2 * np.pi, size=(3, NOISE_MODES))
    axis = ((np.arange(n) + 0.5) / n).astype(np.float32)
    volume = np.zeros((n, n, n, 4), np.float32)
    for c in range(3):
        for k, phase in zip(waves[c], phases[c]):
            angle = np.float32(2 * np.pi) * (k[0] * axis[None, None, :] + k[1] * axis[None, :, None]
                                             + k[2] * axis[:, None, None]) + np.float32(phase)
            direction = (2 * np.pi * np.cross(k, np.eye(3)[c])).astype(np.float32)
            wave = np.cos(angle)
            for axis_index in np.flatnonzero(direction):
                volume[..., axis_index] += wave * direction[axis_index]
    rms = np.sqrt(np.mean(np.sum(volume[..., :3].astype(np.float64) ** 2, axis=-1)))
    volume[..., :3] /= max(rms, 1e-12)
    return volume


def check_resolution(resolution: int, max_texture_3d_size: int) -> None:
    if resolution > max_texture_3d_size:
        raise SettingsError(
            f"turbulence_resolution {resolution} is beyond this GPU's 3D texture limit of {max_texture_3d_size}"
        )
