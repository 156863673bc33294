"""The turbulence volume: a tiling, divergence-free (curl) noise field.

The thesis sampled a small 3D texture of random forces with an animated
offset.  Curl noise makes that field swirl without sources or sinks, so
particles stir instead of bunching up.  The potential is a sum of a few
periodic sine waves with integer wave vectors; its curl is taken
analytically, so the field is exactly divergence-free and tiles seamlessly.
It is computed once per effect at set-up (numpy, vectorised) from the
effect's seed and uploaded as a 3D texture that the simulate kernel samples
with a manual trilinear fetch (see ``sample_noise`` in simulate.glsl).
"""

from __future__ import annotations

import numpy as np

from .settings import SettingsError

NOISE_MODES = 24  # sine waves per potential component
MAX_WAVE_NUMBER = 3  # waves per tile along an axis: the field's largest swirl is a third of a tile


def curl_noise(resolution: int, seed: int) -> np.ndarray:
    """(n, n, n, 4) float32 volume indexed [z, y, x]; xyz: unit-RMS curl field, w: 0."""
    n = resolution
    rng = np.random.default_rng(seed)
    waves = rng.integers(-MAX_WAVE_NUMBER, MAX_WAVE_NUMBER + 1, size=(3, NOISE_MODES, 3))
    waves[np.all(waves == 0, axis=-1)] = (1, 0, 0)
    phases = rng.uniform(0.0, 2 * np.pi, size=(3, NOISE_MODES))
    axis = (np.arange(n) + 0.5) / n
    z, y, x = np.meshgrid(axis, axis, axis, indexing="ij")
    points = np.stack([x, y, z], axis=-1)
    # gradient[c] = d(potential_c)/d(x, y, z), summed over modes
    gradient = np.zeros((3, n, n, n, 3))
    for c in range(3):
        for k, phase in zip(waves[c], phases[c]):
            wave = 2 * np.pi * k
            gradient[c] += np.cos(points @ wave + phase)[..., None] * wave
    curl = np.stack([gradient[2][..., 1] - gradient[1][..., 2],
                     gradient[0][..., 2] - gradient[2][..., 0],
                     gradient[1][..., 0] - gradient[0][..., 1]], axis=-1)
    curl /= max(np.sqrt(np.mean(np.sum(curl * curl, axis=-1))), 1e-12)
    volume = np.zeros((n, n, n, 4), np.float32)
    volume[..., :3] = curl
    return volume


def check_resolution(resolution: int, max_texture_3d_size: int) -> None:
    if resolution > max_texture_3d_size:
        raise SettingsError(
            f"turbulence_resolution {resolution} is beyond this GPU's 3D texture limit of {max_texture_3d_size}"
        )
