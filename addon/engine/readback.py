"""Finished frames off the GPU without stalling the next one.

Readback in Blender's ``gpu`` module is synchronous, so the bake keeps two
targets: frame N is copied to one (``store``) and read from it (``read``)
only after frame N+1's work is queued on the GPU.  EXR frames come back as
half floats packed two to a word (half the bytes, and what EXR stores); 8-bit
PNG frames already in the file's display colors as RGBA8, one word a pixel
(``FRAME_DISPLAY``: OpenColorIO's shader for the scene's view, built by
``display_shader.py``); 16-bit PNG frames as float32, which OpenColorIO then
transforms in place on the CPU.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .kernels import Constant, Image, Kernel, Sampler

FRAME_OUT = Kernel(
    "frame_out",
    images=(Image("frame", "RGBA32F", "READ"), Image("target", "RGBA32F", "WRITE")),
    constants=(Constant("IVEC2", "target_size"),),
    local_size=(16, 16, 1),
    includes=(),
)
FRAME_OUT_HALF = dataclasses.replace(
    FRAME_OUT, images=(FRAME_OUT.images[0], Image("target", "R32UI", "WRITE")), defines=(("HALF_TARGET", "1"),)
)
# What OpenColorIO generates for a view that changes nothing (Blender's 'Raw'); the bake injects the scene's own.
RAW_DISPLAY = "vec4 display_transform(vec4 inPixel)\n{\n  vec4 outColor = inPixel;\n  return outColor;\n}\n"
FRAME_DISPLAY = dataclasses.replace(FRAME_OUT_HALF, name="frame_display", defines=(), generated=RAW_DISPLAY)
FRAME_DISPLAY_ALPHA = dataclasses.replace(FRAME_DISPLAY, defines=(("STRAIGHT_ALPHA", "1"),))


@dataclass(frozen=True)
class DisplayLut:
    """A lookup table the display function samples: (height, width, 4) or (depth, height, width, 4) float32."""

    sampler: Sampler  # named as the generated code samples it
    values: np.ndarray = dataclasses.field(compare=False)
    linear: bool  # sampled between texels (OpenColorIO's INTERP_LINEAR); else at texel centres


@dataclass(frozen=True)
class DisplayShader:
    """GLSL ``vec4 display_transform(vec4)`` without resource declarations, and the tables it samples."""

    function: str
    luts: tuple[DisplayLut, ...] = ()

    def kernel(self, alpha: bool) -> Kernel:
        """``frame_display`` running this function; ``alpha``: the file keeps alpha (straight)."""
        return dataclasses.replace(FRAME_DISPLAY_ALPHA if alpha else FRAME_DISPLAY, generated=self.function,
                                   samplers=tuple(lut.sampler for lut in self.luts))


class FrameReadback:
    """Alternating readback targets of one frame size, holding one of: RGBA half floats (``half``), the
    file's RGBA8 display colors (``display``: a DisplayShader), else RGBA float32."""

    def __init__(self, host, width: int, height: int, half: bool, display: DisplayShader | None = None,
                 alpha: bool = False, targets: int = 2):
        self.host, self.width, self.height, self.half = host, width, height, half
        self.display = display
        self.luts = {}
        if display is not None:
            self.kernel = display.kernel(alpha)
            self.luts = {lut.sampler.name: _lut_texture(host, lut) for lut in display.luts}
        else:
            self.kernel = FRAME_OUT_HALF if half else FRAME_OUT
        packed = half or display is not None
        self.targets = [host.texture(f"readback_{n}", 2 * width if half else width, height,
                                     "R32UI" if packed else "RGBA32F") for n in range(targets)]
        self._next = 0

    def store(self, frame) -> int:
        """Queue the copy of ``frame`` (the compositor's RGBA32F texture); the target's index for :meth:`read`."""
        index, self._next = self._next, (self._next + 1) % len(self.targets)
        self.host.dispatch(self.kernel, self.kernel.groups_for(self.width, self.height),
                           {"frame": frame, "target": self.targets[index], **self.luts},
                           {"target_size": (self.width, self.height)})
        return index

    def buffer(self):
        """Host memory for one frame in flight (see :meth:`read`)."""
        return self.host.readback_buffer(self.targets[0])

    def read(self, index: int, buffer) -> np.ndarray:
        """The stored frame, viewing ``buffer``: (height, width, 4) float16 or float32 with rows bottom to
        top, or (``display``) uint8 with rows top to bottom, as the file stores them."""
        words = self.host.read_into(self.targets[index], buffer)
        if self.display is not None:
            return words.view(np.uint8).reshape(self.height, self.width, 4)
        return words.view(np.float16).reshape(self.height, self.width, 4) if self.half else words


def _lut_texture(host, lut: DisplayLut):
    """The table as a sampled texture, filtered as OpenColorIO's code expects, clamped at its edges."""
    values = lut.values
    if values.ndim == 4:
        texture = host.volume(lut.sampler.name, values)
    else:
        texture = host.texture(lut.sampler.name, values.shape[1], values.shape[0], "RGBA32F", values)
    host.sampling(texture, lut.linear)
    return texture
