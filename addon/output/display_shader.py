"""The scene's display transform as GLSL, for the bake's ``frame_display`` kernel (engine/draw/readback.py).

The same OpenColorIO transform the CPU path applies (``display.display_group``),
turned into a shader function by OpenColorIO itself, as Blender does for its
viewport: for AgX that is matrices, log2, a 57^3 3D LUT with tetrahedral
interpolation, an exponent and the sRGB curve.  OpenColorIO declares the
tables it samples as ``uniform sampler...`` lines; those are taken out of
the text and declared by the host (``Kernel.samplers``) with the tables'
values as textures.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import zipfile
from pathlib import Path

import numpy as np

from ..engine.draw.readback import DisplayLut, DisplayShader
from ..engine.seam.kernels import Sampler
from .display import DisplaySettings, blender_ocio_config, check_display, display_group, image_modules

FUNCTION = "display_transform"  # what frame_display.glsl calls
_SAMPLER_DECLARATION = re.compile(r"^[ \t]*uniform[ \t]+sampler[23]D[ \t]+\w+[ \t]*;[ \t]*\n", re.M)


def display_shader(display: DisplaySettings, cache: Path | None = None) -> DisplayShader:
    """OpenColorIO's GLSL for ``display`` (a clear ValueError for what the GPU path cannot take).

    ``cache``: a folder keeping each shader made, for a config that does not change (Blender's own):
    building one takes 0.2-0.5 s of every bake's start, reading it back a few milliseconds."""
    path = cache / f"{_cache_key(display)}.npz" if cache is not None else None
    shader = _read(path) if path is not None else None
    if shader is None:
        shader = _build(display)
        if path is not None:
            _write(path, shader)
    return shader


def display_cache(display: DisplaySettings) -> Path | None:
    """Where the GPU display transforms of Blender's own config are kept between bakes (a config of one's own,
    whose tables may change beside it, is read afresh each bake)."""
    if display.config != blender_ocio_config():
        return None
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gpu-particles" / "display"


def _cache_key(display: DisplaySettings) -> str:
    """Everything the shader depends on: the settings, the config file, OpenColorIO's version and this code."""
    _, ocio = image_modules()
    config = os.stat(display.config)
    parts = [dataclasses.astuple(display), config.st_size, config.st_mtime_ns, ocio.__version__,
             hashlib.sha256(Path(__file__).read_bytes()).hexdigest()]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:32]


def _write(path: Path, shader: DisplayShader) -> None:
    """Through a temporary name; a cache that cannot be written is only slower."""
    tables = [[lut.sampler.name, lut.sampler.type, lut.linear] for lut in shader.luts]
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial.npz")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(partial, function=np.array(shader.function), tables=np.array(json.dumps(tables)),
                 **{f"lut_{n}": lut.values for n, lut in enumerate(shader.luts)})
        os.replace(partial, path)
    except OSError:
        partial.unlink(missing_ok=True)


def _read(path: Path) -> DisplayShader | None:
    """The shader kept at ``path``, or None when there is none (or it cannot be read whole)."""
    try:
        with np.load(path, allow_pickle=False) as saved:
            luts = tuple(DisplayLut(Sampler(name, kind), saved[f"lut_{n}"], linear)
                         for n, (name, kind, linear) in enumerate(json.loads(str(saved["tables"]))))
            return DisplayShader(str(saved["function"]), luts)
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile):
        return None


def _build(display: DisplaySettings) -> DisplayShader:
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
