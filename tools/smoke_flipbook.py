"""Make the shipped smoke-puff flipbook: presets/textures/smoke_puff_8x8.png and its motion vectors.

    .venv/bin/python tools/smoke_flipbook.py

64 frames of 32 pixels (8x8, a 256x256 sheet, frame 0 top left): a soft
puff of billowing noise that grows and thins out over its life.  The vector
sheet (smoke_puff_8x8_vectors.png, EmberGen's convention: RG the UV offset
to the next frame over the preset's flipbook_vector_strength, 0.5 still)
holds the growth, the one motion the generator knows exactly.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "presets" / "textures"
COLUMNS = ROWS = 8
FRAME = 32
VECTOR_STRENGTH = 0.05  # the preset's flipbook_vector_strength: an offset of 0.05 of a frame at R or G = 1


def billows(x, y, t, rng_phases):
    """Smooth noise in about [-1, 1]: a few rotated sine octaves drifting with t."""
    total = np.zeros_like(x)
    for octave, (angle, phase) in enumerate(rng_phases):
        frequency = 5.0 * 1.9**octave
        u = x * np.cos(angle) + y * np.sin(angle)
        v = -x * np.sin(angle) + y * np.cos(angle)
        total += np.sin(frequency * u + phase + 0.7 * t) * np.cos(frequency * v - phase + 0.5 * t) / 1.6**octave
    return total / 1.8


def puff_radius(t):
    return 0.3 + 0.14 * t


def frame(t, phases):
    """One frame, (FRAME, FRAME, 4) straight RGBA, y up; t from 0 (born) to 1 (gone)."""
    y, x = (np.mgrid[0:FRAME, 0:FRAME] + 0.5) / FRAME - 0.5
    radius = puff_radius(t)
    # The noise is carried outwards with the growth, so the vectors below describe it.
    scale = puff_radius(0.0) / radius
    noise = billows(x * scale, y * scale, t, phases)
    distance2 = (x * x + y * y) / (radius * radius)
    density = np.exp(-2.2 * distance2) * (0.75 + 0.45 * noise) * (1.0 - t) ** 0.7
    alpha = np.clip(1.8 * density, 0.0, 1.0) * np.clip((1.0 - np.sqrt(distance2) * radius / 0.48) * 8, 0, 1)
    shade = np.clip(0.78 + 0.18 * noise + 0.1 * y / radius, 0.0, 1.0)
    return np.dstack([shade, shade, shade * 1.02, alpha]).clip(0, 1)


def vectors(t, dt):
    """The UV offset from frame t to t + dt (the growth), encoded as (offset / strength + 1) / 2 in RG."""
    y, x = (np.mgrid[0:FRAME, 0:FRAME] + 0.5) / FRAME - 0.5
    grow = puff_radius(t + dt) / puff_radius(t) - 1.0
    rg = np.clip((np.dstack([x, y]) * grow / VECTOR_STRENGTH + 1.0) / 2.0, 0.0, 1.0)
    return np.dstack([rg, np.zeros_like(x), np.ones_like(x)])


def sheet(make) -> np.ndarray:
    """The frames laid out 8x8, frame 0 top left, as (height, width, 4) with the first row at the bottom."""
    rows = []
    for row in range(ROWS):
        rows.append(np.hstack([make(row * COLUMNS + column) for column in range(COLUMNS)]))
    return np.vstack(rows[::-1])


def save_png(path: Path, pixels: np.ndarray, colors: bool) -> None:
    import bpy

    height, width = pixels.shape[:2]
    image = bpy.data.images.new(path.stem, width, height, alpha=True)
    if not colors:
        image.colorspace_settings.name = "Non-Color"
    image.pixels.foreach_set(pixels.astype(np.float32).ravel())
    image.filepath_raw = str(path)
    image.file_format = "PNG"
    image.save()
    bpy.data.images.remove(image)


def main() -> int:
    rng = np.random.default_rng(32)
    phases = [(rng.uniform(0, np.pi), rng.uniform(0, 2 * np.pi)) for _ in range(4)]
    frames = COLUMNS * ROWS
    OUT.mkdir(parents=True, exist_ok=True)
    save_png(OUT / "smoke_puff_8x8.png", sheet(lambda k: frame(k / (frames - 1), phases)), colors=True)
    save_png(OUT / "smoke_puff_8x8_vectors.png", sheet(lambda k: vectors(k / (frames - 1), 1 / (frames - 1))),
             colors=False)
    print(f"wrote {OUT}/smoke_puff_8x8.png and smoke_puff_8x8_vectors.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
