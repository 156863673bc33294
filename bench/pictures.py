"""Pictures beside the records (error maps, frames) as JPEG of a few hundred KB.

The whole tree travels to the GPU machine with every command there, so a record's picture is for looking at, not
for measuring: at most ``MAX_WIDTH`` pixels wide, JPEG at ``QUALITY``.  Saved through Blender's own image writer.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

MAX_WIDTH = 960
QUALITY = 85


def _save(image, path: Path) -> Path:
    width, height = image.size
    if width > MAX_WIDTH:
        image.scale(MAX_WIDTH, max(1, round(height * MAX_WIDTH / width)))
    image.filepath_raw, image.file_format = str(path), "JPEG"
    image.save(quality=QUALITY)
    return path


def save_rgb(path: Path, rgb: np.ndarray, display: bool = True) -> Path:
    """``rgb`` (rows top to bottom, linear unless ``display`` is False) as ``path`` with a ``.jpg`` suffix;
    ``display``: through sRGB's curve, clipped."""
    import bpy

    height, width = rgb.shape[:2]
    values = np.clip(rgb, 0.0, 1.0)
    if display:
        values = np.where(values <= 0.0031308, 12.92 * values, 1.055 * values ** (1 / 2.4) - 0.055)
    image = bpy.data.images.new(Path(path).stem, width, height, alpha=True)
    pixels = np.concatenate([values[::-1], np.ones((height, width, 1))], axis=-1).astype(np.float32)
    image.pixels.foreach_set(pixels.ravel())
    try:
        return _save(image, Path(path).with_suffix(".jpg"))
    finally:
        bpy.data.images.remove(image)


def save_file(source: Path, path: Path) -> Path:
    """An image file (a baked or rendered frame) copied as ``path`` with a ``.jpg`` suffix."""
    import bpy

    image = bpy.data.images.load(str(source))
    image.pixels[0]  # loads the file's pixels: an image never read has no data to save
    try:
        return _save(image, Path(path).with_suffix(".jpg"))
    finally:
        bpy.data.images.remove(image)


def main() -> None:
    """Convert the PNG pictures under ``bench/results`` to JPEG (once; the PNGs are removed)."""
    import sys

    for source in sorted(Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent / "results").glob("*.png")):
        target = save_file(source, source)
        source.unlink()
        print(f"{source.name}: {target.stat().st_size // 1024} KB")


if __name__ == "__main__":
    main()
