"""The scene's display transform as GLSL, for the bake's ``frame_display`` kernel (engine/readback.py).

The same OpenColorIO transform the CPU path applies (``frame_writer.display_group``),
turned into a shader function by OpenColorIO itself, as Blender does for its
viewport: for AgX that is matrices, log2, a 57^3 3D LUT with tetrahedral
interpolation, an exponent and the sRGB curve.  OpenColorIO declares the
tables it samples as ``uniform sampler...`` lines; those are taken out of
the text and declared by the host (``Kernel.samplers``) with the tables'
values as textures.
"""

from __future__ import annotations

import re

import numpy as np

from .engine.kernels import Sampler
from .engine.readback import DisplayLut, DisplayShader
from .frame_writer import DisplaySettings, check_display, display_group, image_modules

FUNCTION = "display_transform"  # what frame_display.glsl calls
_SAMPLER_DECLARATION = re.compile(r"^[ \t]*uniform[ \t]+sampler[23]D[ \t]+\w+[ \t]*;[ \t]*\n", re.M)


def display_shader(display: DisplaySettings) -> DisplayShader:
    """OpenColorIO's GLSL for ``display`` (a clear ValueError for what the GPU path cannot take)."""
    _, ocio = image_modules()
    check_display(display)
    config, group = display_group(display)
    description = ocio.GpuShaderDesc.CreateShaderDesc(language=ocio.GPU_LANGUAGE_GLSL_4_0, functionName=FUNCTION,
                                                      resourcePrefix="ocio_")
    description.setAllowTexture1D(False)  # 1D tables as 2D textures: what both hosts declare
    config.getProcessor(group).getDefaultGPUProcessor().extractGpuShaderInfo(description)
    uniforms = [name for name, _ in description.getUniforms()]
    if uniforms:
        raise ValueError(f"the view '{display.view}' has dynamic OpenColorIO properties ({', '.join(uniforms)}), "
                         "which the bake's GPU display transform does not take")
    linear = ocio.INTERP_LINEAR
    luts = [DisplayLut(Sampler(table.samplerName, "FLOAT_3D"), _rgba(table.getValues(), (table.edgeLen,) * 3),
                       table.interpolation == linear) for table in description.get3DTextures()]
    luts += [DisplayLut(Sampler(table.samplerName, "FLOAT_2D"), _rgba(table.getValues(), (table.height, table.width)),
                        table.interpolation == linear) for table in description.getTextures()]
    function = _SAMPLER_DECLARATION.sub("", description.getShaderText())
    if re.search(r"\buniform\b", function):
        raise ValueError(f"OpenColorIO's shader for the view '{display.view}' declares resources the bake cannot "
                         "bind")
    return DisplayShader(function, tuple(luts))


def _rgba(values, shape: tuple[int, ...]) -> np.ndarray:
    """A table's values (1 or 3 channels a texel, first axis slowest) as RGBA float32 texels of ``shape``."""
    flat = np.asarray(values, np.float32)
    channels = flat.size // int(np.prod(shape))
    texels = np.zeros((*shape, 4), np.float32)
    texels[..., :channels] = flat.reshape(*shape, channels)
    return texels
