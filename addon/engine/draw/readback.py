"""Finished frames off the GPU without stalling the next one.

The bake stores frame N (a kernel copies it into one of two targets and, where
the host reads without waiting, ``hosts/gl_readback.py``, queues its read into a
buffer) and reads it only after frame N+1's work is queued on the GPU.  Where
the read is synchronous (Blender's ``gpu`` module), the second target keeps
frame N+1's work from overwriting frame N before it is read.  Each file format
(``output/formats/``) names the layout it wants as plain data, a
:class:`ReadbackLayout`: EXR frames come back as half floats packed two to a
word (half the bytes, and what EXR stores); RGB and RGBA PNG frames already as
the file's values, 8 or 16 bits, rows top first (``frame_display``:
OpenColorIO's shader for the scene's view, made by ``display_shader.py``: 3 to
8 bytes a pixel instead of 16); BW PNG frames as float32, which OpenColorIO
then transforms in place on the CPU.

Its variants are the file's shapes (channels, bit depth, half floats), chosen by the output format, not features an
effect asks for.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..seam.kernels import Constant, Image, Kernel, Sampler

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
FRAME_DISPLAY = Kernel(
    "frame_display",
    images=(Image("frame", "RGBA32F", "READ"), Image("target", "R32UI", "WRITE")),
    constants=(Constant("IVEC2", "frame_size", components=(("frame_width", "x"), ("frame_height", "y"))),),
    local_size=(16, 16, 1),
    includes=(),
    generated=RAW_DISPLAY,
)
# PNG's RGB and RGBA at 8 and 16 bits; BW stays on the CPU (frame_writer.file_pixels)
DISPLAY_FILE_TYPES = ((3, 1), (4, 1), (3, 2), (4, 2))  # (channels, bytes a value)
FRAME_DISPLAY_VARIANTS = {
    (channels, depth): dataclasses.replace(FRAME_DISPLAY, defines=(("FILE_CHANNELS", str(channels)),
                                                                    ("FILE_BYTES", str(depth))))
    for channels, depth in DISPLAY_FILE_TYPES
}


@dataclass(frozen=True)
class ReadbackLayout:
    """How a frame comes back for its file, as a format asks for it: ``values`` ``"HALF"`` (RGBA half floats,
    two to a word), ``"FLOAT"`` (RGBA float32) or ``"DISPLAY"`` (the file's own values through a
    :class:`DisplayShader`: ``channels`` 3 or 4 of ``value_bytes`` 1 or 2 each)."""

    values: str
    channels: int = 4
    value_bytes: int = 4


HALF_RGBA = ReadbackLayout("HALF", value_bytes=2)
FLOAT_RGBA = ReadbackLayout("FLOAT")


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

    def kernel(self, channels: int, depth: int) -> Kernel:
        """``frame_display`` running this function, for an RGB (3) or RGBA (4, straight alpha) file of
        ``depth`` bytes a value (1 or 2)."""
        return dataclasses.replace(FRAME_DISPLAY_VARIANTS[channels, depth], generated=self.function,
                                   samplers=tuple(lut.sampler for lut in self.luts))


class FrameReadback:
    """Alternating readback targets of one frame size, holding frames as ``layout`` asks (a ``"DISPLAY"``
    layout converts them with ``display``, a DisplayShader)."""

    def __init__(self, host, width: int, height: int, layout: ReadbackLayout, display: DisplayShader | None = None,
                 targets: int = 2):
        self.host, self.width, self.height, self.layout = host, width, height, layout
        self.luts = {}
        half = layout.values == "HALF"
        if layout.values == "DISPLAY":
            self.kernel = display.kernel(layout.channels, layout.value_bytes)
            self.luts = {lut.sampler.name: _lut_texture(host, lut) for lut in display.luts}
            words = -(-layout.channels * layout.value_bytes * width // 4)
            self.groups = self.kernel.groups_for(-(-width // 4), height)  # four pixels an invocation
            self.constants = self.kernel.pack({"frame_width": width, "frame_height": height})
        else:
            self.kernel = FRAME_OUT_HALF if half else FRAME_OUT
            words = 2 * width if half else width
            self.groups = self.kernel.groups_for(width, height)
            self.constants = {"target_size": (width, height)}
        packed = layout.values != "FLOAT"
        self.targets = [host.texture(f"readback_{n}", words, height, "R32UI" if packed else "RGBA32F")
                        for n in range(targets)]
        self._next = 0

    def store(self, frame, buffer) -> PendingFrame:
        """Queue the copy of ``frame`` (the compositor's RGBA32F texture) into the next target, and its read
        into ``buffer`` (from :meth:`buffer`) where the host reads without waiting; :meth:`read` it once the
        next frame's work is queued."""
        index, self._next = self._next, (self._next + 1) % len(self.targets)
        self.host.dispatch(self.kernel, self.groups, {"frame": frame, "target": self.targets[index], **self.luts},
                           self.constants)
        self.host.read_start(self.targets[index], buffer)
        return PendingFrame(index, buffer)

    def buffer(self):
        """Host memory for one frame in flight (see :meth:`read`)."""
        return self.host.readback_buffer(self.targets[0])

    def read(self, pending: PendingFrame) -> np.ndarray:
        """The stored frame, rows top to bottom as files store them, viewing its buffer: (height, width, 4)
        float16 or float32, or (``"DISPLAY"``) (height, width, channels) uint8 or uint16 (contiguous unless
        a row's values end inside a word)."""
        words = self.host.read_finish(self.targets[pending.target], pending.buffer)
        layout = self.layout
        if layout.values == "DISPLAY":
            row = words.view(f"uint{8 * layout.value_bytes}").reshape(self.height, -1)
            return row[:, :layout.channels * self.width].reshape(self.height, self.width, layout.channels)
        return words.view(np.float16).reshape(self.height, self.width, 4) if layout.values == "HALF" else words

    def free(self, buffer) -> None:
        """Give back a buffer from :meth:`buffer` that no one reads any more."""
        self.host.free_readback_buffer(buffer)


@dataclass(frozen=True)
class PendingFrame:
    """A frame stored but not read yet: its target and the buffer it is (being) read into."""

    target: int
    buffer: object


def _lut_texture(host, lut: DisplayLut):
    """The table as a sampled texture, filtered as OpenColorIO's code expects, clamped at its edges."""
    values = lut.values
    if values.ndim == 4:
        texture = host.volume(lut.sampler.name, values)
    else:
        texture = host.texture(lut.sampler.name, values.shape[1], values.shape[0], "RGBA32F", values)
    host.sampling(texture, lut.linear)
    return texture
