"""What a neighbour walk loads, without a GPU: candidates (entries whose distance is tested) and bin ranges (two
offsets each) a particle walks for each ``reach`` (cells of radius / reach, rows trimmed to the sphere as
shaders/include/neighbours.glsl trims them), on the interactions bench's lattice (spacing 2.02 x size) at the
presets' radius over size.  The walk's cost is about these loads; neighbours.REACH takes the fewer.

    .venv/bin/python bench/neighbour_candidates.py
"""

from __future__ import annotations

from collections import Counter

import numpy as np

# The presets' interaction radius over size (sand_pile, water_splash; the flock bench takes the fluid's).
RATIOS = {"GRANULAR": 2.5, "FLUID": 4.0, "FLOCKING": 4.0}
SPACING = 2.02  # sizes
SIDE = 24  # lattice points a side; the particles walked are its middle ones
SAMPLE = 400


def lattice() -> np.ndarray:
    index = np.arange(SIDE ** 3)
    points = np.stack([index % SIDE, (index // SIDE) % SIDE, index // SIDE // SIDE], axis=1).astype(np.float64)
    return (points + np.random.default_rng(0).uniform(-0.01, 0.01, points.shape)) * SPACING


def walk_loads(points: np.ndarray, walkers: np.ndarray, radius: float, reach: int) -> tuple[float, float]:
    """Mean candidates and ranges a walker loads: the rows its radius reaches, each trimmed in x."""
    scaled = points * (reach / radius)
    cells = Counter(map(tuple, np.floor(scaled).astype(int)))
    candidates = ranges = 0
    for s in walkers * (reach / radius):
        centre = np.floor(s).astype(int)
        for dz in range(-reach, reach + 1):
            for dy in range(-reach, reach + 1):
                low = np.array([centre[1] + dy, centre[2] + dz]) - s[1:]
                gap = np.maximum(np.maximum(low, -low - 1.0), 0.0)
                room = reach * reach - gap @ gap
                if room < 0:
                    continue
                first = int(max(np.floor(s[0] - np.sqrt(room)), centre[0] - reach))
                last = int(min(np.floor(s[0] + np.sqrt(room)), centre[0] + reach))
                ranges += 1
                candidates += sum(cells.get((x, centre[1] + dy, centre[2] + dz), 0) for x in range(first, last + 1))
    return candidates / len(walkers), ranges / len(walkers)


def main() -> None:
    points = lattice()
    middle = points[np.abs(points - points.mean(axis=0)).max(axis=1) < SIDE * SPACING / 4][:SAMPLE]
    for interaction, ratio in RATIOS.items():
        near = (np.linalg.norm(points[None] - middle[:50, None], axis=2) < ratio).sum(axis=1).mean() - 1
        rows = []
        for reach in (1, 2, 3):
            candidates, ranges = walk_loads(points, middle, ratio, reach)
            rows.append(f"reach {reach}: {candidates:.0f} candidates + {ranges:.1f} ranges = "
                        f"{candidates + 2 * ranges:.0f} loads")
        print(f"{interaction} (radius {ratio} x size, {near:.1f} neighbours): " + "; ".join(rows))


if __name__ == "__main__":
    main()
