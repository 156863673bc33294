"""The splat benchmark's particle distributions, shared by the CPU and device runs.

Every case uses an orthographic camera whose world x, y are pixel coordinates
(world (0, 0) is the bottom-left corner of the target, (width, height) the top
right), so a distribution is written directly in pixels.  All particles are
alive (age in [0, 0.99), lifetime 1), one pixel in radius (coverage 1), and
their color runs from ``COLOR_START`` at birth to ``COLOR_END`` at death.

=========  ===================================================================
case       particles
=========  ===================================================================
normal     gaussian around the view center, sigma = 15% of width and height:
           the 2-sigma ellipse (86% of particles) covers about 28% of the
           screen, about 0.2% fall outside the frustum (read, then culled)
spread     uniform over the whole screen: the fewest particles per pixel
clumpy     90% in 8 tight clusters (gaussian, sigma 2 px, so each a few
           pixels wide, thousands of particles per pixel), 10% uniform:
           where rasterized points collapse on blending one pixel over and over
=========  ===================================================================

Positions have random depth in [-1, 1] (inside the near/far range).
"""

from __future__ import annotations

import numpy as np

from addon.engine.settings.settings import effect_settings, render_settings

CASES = ("normal", "spread", "clumpy")
COLOR_START = (1.0, 0.6, 0.2)
COLOR_END = (0.8, 0.1, 0.02)
CLUSTERS = 8
CLUSTER_FRACTION = 0.9
CLUSTER_SIGMA_PX = 2.0
NORMAL_SIGMA = 0.15




def positions(case: str, n: int, width: int, height: int, rng: np.random.Generator) -> np.ndarray:
    """(n, 3) float32 world positions of one case (x, y in pixels)."""
    size = np.array([width, height], np.float64)
    if case == "normal":
        xy = rng.normal(size / 2, NORMAL_SIGMA * size, (n, 2))
    elif case == "spread":
        xy = rng.random((n, 2)) * size
    elif case == "clumpy":
        clustered = int(n * CLUSTER_FRACTION)
        centers = (0.1 + 0.8 * rng.random((CLUSTERS, 2))) * size
        which = rng.integers(0, CLUSTERS, clustered)
        xy = np.empty((n, 2))
        xy[:clustered] = centers[which] + rng.normal(0.0, CLUSTER_SIGMA_PX, (clustered, 2))
        xy[clustered:] = rng.random((n - clustered, 2)) * size
        xy = xy[rng.permutation(n)]  # clusters interleaved in memory, as simulation leaves them
    else:
        raise ValueError(f"unknown case {case!r}; cases are {CASES}")
    z = rng.uniform(-1.0, 1.0, (n, 1))
    return np.concatenate([xy, z], axis=1).astype(np.float32)


def state(xyz: np.ndarray, rng: np.random.Generator, ages: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(pos_age, vel_life) for live particles at ``xyz``: lifetime 1, ages in [0, 0.99) (or all 0.5)."""
    n = len(xyz)
    pos_age = np.empty((n, 4), np.float32)
    pos_age[:, :3] = xyz
    pos_age[:, 3] = rng.random(n, dtype=np.float32) * np.float32(0.99) if ages else 0.5
    vel_life = np.zeros((n, 4), np.float32)
    vel_life[:, :3] = rng.normal(0, 1, (n, 3))
    vel_life[:, 3] = 1.0
    return pos_age, vel_life


def settings(n: int, color_start=COLOR_START, color_end=COLOR_END, strength=1.0, size_px=1.0):
    return effect_settings({"count": n, "color_start": color_start, "color_end": color_end,
                            "emission_strength": strength, "size": size_px})


def pixel_counts(xyz: np.ndarray, width: int, height: int) -> np.ndarray:
    """Particles per pixel (flat, width * height) as the splat lands them (visible ones only)."""
    x = np.floor(xyz[:, 0]).astype(np.int64)
    y = np.floor(xyz[:, 1]).astype(np.int64)
    inside = (x >= 0) & (x < width) & (y >= 0) & (y < height)
    return np.bincount(y[inside] * width + x[inside], minlength=width * height)


def fitted_emax(counts: np.ndarray, brightest: float | None = None) -> float:
    """A power-of-two Emax the busiest pixel stays under (no overflow in the timed runs)."""
    brightest = max(COLOR_START) if brightest is None else brightest
    peak = max(1.0, float(counts.max()) * brightest * 1.01)
    return float(2.0 ** np.ceil(np.log2(peak)))


def render(emax: float):
    return render_settings({"emax": emax})
