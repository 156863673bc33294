"""The scene's display transform on the CPU, and Blender's image modules: what the frame writer, the formats
and the GPU's display shader all use, so each imports it and none imports another for it.

The display transform (OpenColorIO) is applied for formats in display colors:
on the CPU by :func:`display_pixels`, on the GPU by display_shader.py.
"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np


def image_modules():
    """OpenImageIO and PyOpenColorIO: importable as is in Blender, from Blender's own site-packages in the bpy module."""
    return bundled_module("OpenImageIO"), bundled_module("PyOpenColorIO")


def bundled_module(name: str):
    """A module Blender bundles (OpenImageIO, PyOpenColorIO, openvdb): importable as is in Blender, from
    Blender's own site-packages in the bpy module."""
    try:
        return importlib.import_module(name)
    except ImportError:
        import bpy

        version = f"python{sys.version_info.major}.{sys.version_info.minor}"
        site = Path(bpy.utils.system_resource("PYTHON")) / "lib" / version / "site-packages"
        if str(site) not in sys.path:
            sys.path.append(str(site))
        return importlib.import_module(name)


@dataclass(frozen=True)
class DisplaySettings:
    """What ``save_render`` applies to a PNG: Blender's OCIO config, display, view, look, exposure, gamma."""

    config: str
    display: str
    view: str
    look: str
    exposure: float
    gamma: float
    luma: tuple[float, float, float] = (0.2126, 0.7152, 0.0722)


def display_group(display: DisplaySettings):
    """The OCIO config and the transform Blender builds for writing an image (see blender's
    libocio_display_processor.cc): exposure in scene linear, the look, the display/view transform, then 1/gamma.
    Both paths apply it: :func:`display_processor` on the CPU, ``display_shader.py`` on the GPU."""
    _, ocio = image_modules()
    config = ocio.Config.CreateFromFile(display.config)
    group = ocio.GroupTransform()
    source = config.getColorSpace(ocio.ROLE_SCENE_LINEAR).getName()
    if display.exposure != 0:
        scale = 2.0 ** display.exposure
        group.appendTransform(ocio.MatrixTransform([scale, 0, 0, 0, 0, scale, 0, 0, 0, 0, scale, 0, 0, 0, 0, 1]))
    use_look = display.look not in ("", "None")
    if use_look:
        look_space = config.getLook(display.look).getProcessSpace()
        group.appendTransform(ocio.LookTransform(src=source, dst=look_space, looks=display.look))
        source = look_space
    group.appendTransform(ocio.DisplayViewTransform(src=source, display=display.display, view=display.view,
                                                    looksBypass=use_look))
    if display.gamma != 1:
        exponent = 1.0 / display.gamma
        group.appendTransform(ocio.ExponentTransform([exponent, exponent, exponent, 1.0]))
    return config, group


def display_processor(display: DisplaySettings):
    """The OCIO CPU processor of :func:`display_group`."""
    config, group = display_group(display)
    return config.getProcessor(group).getDefaultCPUProcessor()


def check_display(display: DisplaySettings) -> None:
    """A clear error now for a display, view or look the OCIO config lacks (reading the config is quick;
    building the processor is not, so that happens on a writer thread)."""
    _, ocio = image_modules()
    config = ocio.Config.CreateFromFile(display.config)
    if display.display not in config.getDisplays():
        raise ValueError(f"display '{display.display}' is not in the OpenColorIO config {display.config}")
    if display.view not in config.getViews(display.display):
        raise ValueError(f"view '{display.view}' is not a view of display '{display.display}'")
    if display.look not in ("", "None") and config.getLook(display.look) is None:
        raise ValueError(f"look '{display.look}' is not in the OpenColorIO config {display.config}")


def display_pixels(pixels: np.ndarray, processor, alpha: bool) -> np.ndarray:
    """Linear premultiplied RGBA (float32, changed in place) to what ``save_render`` puts in an 8/16-bit file.

    The one place that decides alpha semantics (compositor work may change them):
    without alpha the premultiplied color is transformed as is and alpha dropped;
    with alpha the file holds straight alpha, as PNG defines it: the color is
    divided by alpha (where it is not 0), then transformed.  Clamping and
    rounding to the file's depth are the writer's (``encode``).
    """
    if alpha:
        color, coverage = pixels[..., :3], pixels[..., 3:]
        np.divide(color, coverage, out=color, where=coverage != 0)
    processor.applyRGBA(pixels)
    return pixels


def quantize(pixels: np.ndarray, channels: int, dtype: np.dtype) -> np.ndarray:
    """Float [0, 1] (scaled in place) to ``dtype``'s full range, the first ``channels`` kept: numpy in place,
    faster than OpenImageIO's own float to uint8 conversion."""
    top = np.iinfo(dtype).max
    np.multiply(pixels, top, out=pixels)
    np.add(pixels, 0.5, out=pixels)
    np.clip(pixels, 0.0, top, out=pixels)
    out = np.empty((*pixels.shape[:2], channels), dtype)
    np.copyto(out, pixels[:, :, :channels], casting="unsafe")
    return out


def ocio_config_path() -> str:
    """The OpenColorIO config Blender uses: $OCIO when it names a file, else the one Blender ships."""
    configured = os.environ.get("OCIO", "")
    if configured and Path(configured).is_file():
        return configured
    return blender_ocio_config()


def blender_ocio_config() -> str:
    import bpy  # here, not above: benchmark writer processes import the formats without Blender's session

    return str(Path(bpy.utils.system_resource("DATAFILES", path="colormanagement")) / "config.ocio")
