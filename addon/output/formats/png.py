"""PNG frames: 8 or 16 bits in the scene's display colors, as ``Image.save_render`` writes them.

The scene's view transform, look, exposure and gamma are applied as
``save_render`` applies them: to RGB and RGBA on the GPU as the frame is read
back (display_shader.py), so frames arrive as the file's values; to BW here, on
the writer thread (OpenColorIO's CPU processor).  Bakes write RGB; the other
color modes are the writer's own, compared with ``save_render`` by the tests.
"""

from __future__ import annotations

from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...engine.draw.readback import FLOAT_RGBA, ReadbackLayout
from ..display import DisplaySettings, check_display, display_pixels, display_processor, ocio_config_path, quantize
from .base import FrameFormat

PNG_DEPTHS = {"8": "uint8", "16": "uint16"}
PNG_CHANNELS = {"BW": 1, "RGB": 3, "RGBA": 4}
PNG_FILTER_NONE = 8  # libpng's PNG_FILTER_NONE


@dataclass(frozen=True)
class PngFormat(FrameFormat):
    label: ClassVar[str] = "PNG"
    extension: ClassVar[str] = ".png"
    channels: int  # 1 (BW), 3 or 4
    depth: str  # 'uint8' or 'uint16'
    level: int  # zlib level 0-9, as Blender maps the scene's compression percentage
    display: DisplaySettings

    @classmethod
    def from_scene(cls, scene) -> PngFormat:
        settings = scene.render.image_settings
        managed = settings if settings.color_management == "OVERRIDE" else scene
        view = managed.view_settings
        for unsupported, label in (("use_curve_mapping", "Curves"), ("use_white_balance", "White Balance")):
            if getattr(view, unsupported):
                raise ValueError(f"Color Management {label} are not supported by the particle bake yet: turn them "
                                 "off or bake to OpenEXR")
        display = DisplaySettings(config=ocio_config_path(), display=managed.display_settings.display_device,
                                  view=view.view_transform, look=view.look, exposure=view.exposure, gamma=view.gamma)
        # PNG frames are RGB, the light on black, meant for Add or Screen: as straight-alpha RGBA, additive
        # glow (alpha near 0, bright color) would round to alpha 0 and vanish (docs/features.md).
        return cls(channels=PNG_CHANNELS["RGB"], depth=PNG_DEPTHS[settings.color_depth],
                   level=min(max(int(settings.compression / 11.1111), 0), 9), display=display)

    @property
    def gpu_display(self) -> DisplaySettings | None:
        """RGB and RGBA: converted on the GPU (the ``frame_display`` kernel); BW on the CPU."""
        return self.display if self.channels in (3, 4) else None

    @property
    def readback(self) -> ReadbackLayout:
        if self.gpu_display is None:
            return FLOAT_RGBA
        return ReadbackLayout("DISPLAY", self.channels, np.dtype(self.depth).itemsize)

    def attributes(self) -> dict[str, object]:
        """No row filters, by measurement on the default preset's 1080p frame: 26 ms and 348 KB at zlib level 1,
        against 64 ms and 398 KB with libpng's adaptive filters (what save_render writes); the level is the
        scene's Compression, mapped as Blender maps it (15% -> 1)."""
        return {"png:compressionLevel": self.level, "png:filter": PNG_FILTER_NONE,
                "oiio:UnassociatedAlpha": 1}  # already straight (display_pixels): OIIO must not divide

    def converter(self, pool: Executor) -> Future | None:
        """BW: OpenColorIO's CPU processor (building it takes 0.2-0.7 s for AgX), its display checked now."""
        if self.gpu_display is not None:
            return None
        check_display(self.display)
        return pool.submit(display_processor, self.display)

    def file_pixels(self, pixels: np.ndarray, converter) -> np.ndarray:
        """RGB(A): the values the GPU made, as they are; BW: through :func:`display_pixels` (``converter``, the
        CPU processor), BW as luma of the clamped display color (Blender makes gray from the 8-bit color), then
        quantized as Blender does (clamp, round half up)."""
        if self.gpu_display is not None:
            return super().file_pixels(pixels, converter)
        if not pixels.flags.writeable:  # mapped readback memory (hosts/gl_readback.py)
            pixels = pixels.copy()
        display_pixels(pixels, converter, alpha=self.channels == 4)
        if self.channels == 1:
            pixels[..., 0] = np.clip(pixels[..., :3], 0.0, 1.0) @ np.asarray(self.display.luma, np.float32)
        return quantize(pixels, self.channels, np.dtype(self.depth))
