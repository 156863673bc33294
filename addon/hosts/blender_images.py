"""Sprite images from Blender (``BlenderHost.sprite_image``): an image of the file by name, else an image file.

A file is loaded into ``bpy.data.images`` once (``check_existing``), so the
viewport, the bake and the final render read the same image; a relative path
is tried against the .blend (``//``), then the shipped presets folder.  The
key that keeps an upload (sprite_sheets.SpriteSheets) is what Blender tells
without reading pixels: name, file, size, source, packing and whether it was
edited since it was saved (an edit made while already unsaved shows once the
image is saved or reloaded).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..engine.resources import resource_dir
from ..engine.settings import SettingsError
from ..engine.sprite_sheets import SheetImage


def sprite_image(source: str) -> SheetImage:
    import bpy

    image = bpy.data.images.get(source) or _load(bpy, source)
    key = (image.name_full, image.filepath, tuple(image.size), image.source, image.packed_file is not None,
           image.is_dirty, image.colorspace_settings.name, _modified(bpy, image))
    return SheetImage(key, tuple(image.size), lambda linear: _pixels(image, linear))


def _load(bpy, source: str):
    for path in _candidates(bpy, source):
        if path.is_file():
            try:
                return bpy.data.images.load(str(path), check_existing=True)
            except RuntimeError as error:
                raise SettingsError(f"sprite image '{source}': Blender cannot read {path}: {error}") from None
    raise SettingsError(f"sprite image '{source}': no image of that name in this file and no such image file")


def _candidates(bpy, source: str) -> list[Path]:
    path = Path(bpy.path.abspath(source))
    return [path] if path.is_absolute() else [path, resource_dir("presets") / source]


def _modified(bpy, image) -> float:
    """The file's modification time (a file changed on disk is read again once Blender reloads it), 0 without."""
    if image.packed_file is not None or not image.filepath:
        return 0.0
    try:
        return Path(bpy.path.abspath(image.filepath, library=image.library)).stat().st_mtime
    except OSError:
        return 0.0


def _pixels(image, linear: bool) -> np.ndarray:
    """(height, width, 4) float32, straight alpha: Blender keeps float images premultiplied (divided out here) and
    8-bit ones straight; 8-bit sRGB images made linear for colors (float images are linear already)."""
    width, height = image.size
    pixels = np.empty(width * height * 4, np.float32)
    image.pixels.foreach_get(pixels)
    pixels = pixels.reshape(height, width, 4)
    if image.is_float and image.alpha_mode != "CHANNEL_PACKED":
        alpha = pixels[..., 3:]
        np.divide(pixels[..., :3], alpha, out=pixels[..., :3], where=alpha > 0)
    if linear and not image.is_float and image.colorspace_settings.name == "sRGB":
        rgb = pixels[..., :3]
        pixels[..., :3] = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    return pixels
