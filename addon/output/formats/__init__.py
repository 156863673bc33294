"""The bake's output formats, keyed by Blender's own names for them (``scene.render.image_settings.file_format``,
the enum the Render & Bake panel shows).

Each kind is a :class:`FrameFormat` (base.py) in a module of its own; a third
format is one more module and its line in :data:`KINDS`.
"""

from __future__ import annotations

from .base import FrameFormat
from .exr import ExrFormat
from .png import PngFormat

KINDS: dict[str, type[FrameFormat]] = {"PNG": PngFormat, "OPEN_EXR": ExrFormat, "OPEN_EXR_MULTILAYER": ExrFormat}


def frame_format(scene) -> FrameFormat:
    """The scene's output format as the writer threads need it, read once on the main thread."""
    return KINDS[scene.render.image_settings.file_format].from_scene(scene)


def file_extension(file_format: str) -> str:
    """The frame files' suffix for Blender's ``file_format`` (PNG's for a format the bake does not write)."""
    return KINDS.get(file_format, PngFormat).extension


def supported_formats() -> str:
    """The formats the bake writes, as its messages name them."""
    return " or ".join(dict.fromkeys(kind.label for kind in KINDS.values()))
