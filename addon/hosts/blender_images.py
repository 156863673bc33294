"""Sprite images from Blender (``BlenderHost.sprite_image``): an image of the file by name, else an image file.

A file is loaded into ``bpy.data.images`` once (``check_existing``), so the
viewport, the bake and the final render read the same image; a relative path
is tried against the .blend (``//``), then the shipped presets folder.  The
key that keeps an upload (sprite_sheets.SpriteSheets) is what Blender tells
without reading pixels: name, file, size, source, packing and whether it was
edited since it was saved (an edit made while already unsaved shows once the
image is saved or reloaded).  The host remembers which image a file setting
loaded (:class:`SpriteImages`), so a draw finds it by name and stats its file
once instead of trying every candidate path again.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..engine.look.sprite_sheets import SheetImage
from ..engine.seam.resources import resource_dir
from ..engine.settings.settings import SettingsError


class SpriteImages:
    """``sprite_image`` of a host, remembering the image each file setting loaded: a viewport draw asks every
    draw, and trying the candidate paths stats up to three files.  The remembered image stands while the .blend
    is the same, the image keeps its name and unpacked file, and the file is there (the one stat the key's
    modification time makes); else the candidates are tried again, so a missing file is named as before."""

    def __init__(self):
        self._loaded: dict[str, tuple[str, str, str]] = {}  # source -> (.blend path, image name, image filepath)

    def __call__(self, source: str) -> SheetImage:
        import bpy

        image = bpy.data.images.get(source)
        if image is not None:
            return _sheet_image(image, _modified(bpy, image))
        remembered = self._loaded.get(source)
        if remembered is not None and remembered[0] == bpy.data.filepath:
            image = bpy.data.images.get(remembered[1])
            if image is not None and image.filepath == remembered[2] and image.packed_file is None:
                modified = _modified(bpy, image)
                if modified is not None:
                    return _sheet_image(image, modified)
        image = _load(bpy, source)
        self._loaded[source] = (bpy.data.filepath, image.name_full, image.filepath)
        return _sheet_image(image, _modified(bpy, image))


def _sheet_image(image, modified: float | None) -> SheetImage:
    size = tuple(image.size)  # (Blender acquires the image buffer to tell)
    key = (image.name_full, image.filepath, size, image.source, image.packed_file is not None, image.is_dirty,
           image.colorspace_settings.name, modified)
    return SheetImage(key, size, lambda linear: _pixels(image, linear), eight_bit=not image.is_float,
                      srgb=not image.is_float and image.colorspace_settings.name == "sRGB")


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


def _modified(bpy, image) -> float | None:
    """The file's modification time (a file changed on disk is read again once Blender reloads it); 0 for a packed
    or generated image, None when its file is missing."""
    if image.packed_file is not None or not image.filepath:
        return 0.0
    try:
        return os.stat(bpy.path.abspath(image.filepath, library=image.library)).st_mtime
    except OSError:
        return None


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
