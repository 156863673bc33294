"""The host interface every recording is written against, and shared pieces."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..engine.seam.kernels import Kernel
from ..engine.settings.settings import SettingsError

CHANNELS = {"RGBA32F": 4, "RGBA16F": 4, "RGBA8": 4, "SRGB8_A8": 4, "R32F": 1, "R32UI": 1, "DEPTH32F": 1}
# What read() returns and texture(data=) takes; RGBA16F is stored as halves but moves as float32.
DTYPES = {"RGBA32F": np.float32, "RGBA16F": np.float32, "RGBA8": np.float32, "SRGB8_A8": np.float32, "R32F": np.float32,
          "R32UI": np.uint32, "DEPTH32F": np.float32}
# 8-bit formats, sampled (sprite sheets and their normals): they move as float32 in [0, 1] as stored, SRGB8_A8's
# values sRGB-encoded (the GPU decodes them to linear where it samples, before it filters).
UNORM8 = frozenset(("RGBA8", "SRGB8_A8"))
TEXEL_BYTES = {"RGBA32F": 16, "RGBA16F": 8, "RGBA8": 4, "SRGB8_A8": 4, "R32F": 4, "R32UI": 4, "DEPTH32F": 4}
# OpenGL 4.3 (what Blender requires) guarantees 3D textures of at least this many texels a side.
MIN_MAX_3D_TEXTURE_SIZE = 2048


class ShaderCompileError(RuntimeError):
    """A kernel failed to compile; the message names the file and quotes the log."""


class GPUMemoryError(RuntimeError):
    """A texture could not be allocated (too many particles or pixels for this GPU)."""


class NoGPUError(RuntimeError):
    """No usable GPU context (no display, no EGL, or a GPU without compute)."""


@dataclass
class Texture:
    """A host texture plus what the recordings need to know about it."""

    name: str
    width: int
    height: int
    format: str
    native: Any
    depth: int = 1  # a 3D texture's depth (``Host.volume``)
    dimensions: int = 2  # 3: a volume, even one texel deep

    @property
    def shape(self) -> tuple[int, ...]:
        channels = CHANNELS[self.format]
        planes = (self.depth,) if self.dimensions == 3 else ()
        return (*planes, self.height, self.width) if channels == 1 else (*planes, self.height, self.width, channels)


@dataclass
class ReadbackBuffer:
    """Host memory a texture is read back into; ``array`` views it (``native``: the host's own buffer)."""

    array: np.ndarray
    native: Any = None


class Host:
    """What a recording may do: make textures, compile and dispatch kernels, read back."""

    name = "abstract"
    max_texture_size: int
    max_work_group_count: int
    max_texture_3d_size: int

    def texture(self, name: str, width: int, height: int, format: str, data: np.ndarray | None = None) -> Texture:
        raise NotImplementedError

    def volume(self, name: str, data: np.ndarray | None = None, *, shape: tuple[int, int, int] | None = None,
               format: str = "R32F") -> Texture:
        """A 3D texture: from ``data``, a (depth, height, width, 4) float array (RGBA32F) or a (depth, height,
        width) one (R32F); or, without data, an empty (zeroed) ``format`` volume of ``shape`` = (depth, height,
        width) for compute to write (R32F or R32UI; bound by an ``Image`` of ``dimensions=3``)."""
        raise NotImplementedError

    def clear(self, texture: Texture, value: float | int = 0) -> None:
        raise NotImplementedError

    def sampling(self, texture: Texture, linear: bool) -> None:
        """Sample ``texture`` between texels (``linear``) or at the nearest, clamped to its edge texels."""
        raise NotImplementedError

    def read(self, texture: Texture) -> np.ndarray:
        raise NotImplementedError

    def read_rows(self, texture: Texture, rows: int, buffer: ReadbackBuffer | None = None) -> np.ndarray:
        """The first ``rows`` rows of a 2D ``texture`` (only they read back, where the host can), into ``buffer``
        from :meth:`row_buffer` when given (reused memory: no allocation, no fresh pages to fault in)."""
        array = self.read(texture)[:rows]
        if buffer is None:
            return array
        into = buffer.array.reshape(-1)[:array.size].reshape(array.shape)
        np.copyto(into, array)
        return into

    def row_buffer(self, texture: Texture) -> ReadbackBuffer:
        """Host memory of the whole ``texture`` for :meth:`read_rows` to read into, made once and reused."""
        return ReadbackBuffer(np.empty(texture.shape, DTYPES[texture.format]))

    def readback_buffer(self, texture: Texture) -> ReadbackBuffer:
        """Host memory that :meth:`read_into` fills with ``texture`` (made once, reused every frame)."""
        return ReadbackBuffer(np.empty(texture.shape, DTYPES[texture.format]))

    def read_into(self, texture: Texture, buffer: ReadbackBuffer) -> np.ndarray:
        """Read ``texture`` into ``buffer`` (no allocation where the host allows it); its array."""
        np.copyto(buffer.array, self.read(texture))
        return buffer.array

    reads_without_waiting = False  # whether read_start queues the copy (the read happens then, not in read_finish)

    def read_start(self, texture: Texture, buffer) -> None:
        """Begin reading ``texture`` into ``buffer`` from :meth:`readback_buffer`: a host that reads without
        waiting queues the copy here; this one reads in :meth:`read_finish`."""

    def read_finish(self, texture: Texture, buffer) -> np.ndarray:
        """What :meth:`read_start` began: ``texture`` as it was then, a view of ``buffer``."""
        return self.read_into(texture, buffer)

    def free_readback_buffer(self, buffer) -> None:
        """Release a buffer from :meth:`readback_buffer` (host memory: the garbage collector's)."""

    def compile(self, kernel: Kernel) -> Any:
        raise NotImplementedError

    def dispatch(self, kernel: Kernel, groups: tuple[int, int, int], textures: dict[str, Texture], constants: dict[str, Any]) -> None:
        raise NotImplementedError

    def draw(self, raster, primitive: str, vertices: int, instances: int, target: Texture, depth: Texture | None,
             textures: dict[str, Texture], constants: dict[str, Any], blend: str = "ADD") -> None:
        """Rasterize ``vertices`` x ``instances`` attribute-less vertices into ``target``.

        ``primitive`` is 'POINTS' or 'TRIS'; with ``depth`` the fragments are
        depth-tested (LESS_EQUAL, no writes) against that scene depth.
        ``blend`` 'ADD' adds the fragments; 'OVER' lays premultiplied fragments
        over what is there, in drawing order (sprites.py).
        """
        raise NotImplementedError

    def sprite_image(self, source: str):
        """The image a sprite setting names (sprite_sheets.SheetImage): a host that reads images overrides this."""
        raise SettingsError(f"sprite image '{source}': this host reads no images (Blender's does)")

    def finish(self) -> None:
        """Block until the GPU has done everything queued (for timing)."""
        raise NotImplementedError

    def sleep_until_idle(self) -> None:
        """Wait for the GPU without taking a core, where the host can (a later read then waits no more);
        others wait in that read."""


def volume_layout(data: np.ndarray | None, shape: tuple[int, int, int] | None, format: str
                  ) -> tuple[tuple[int, int, int], str]:
    """(depth, height, width) and format of a ``Host.volume`` call: from the data's shape, else as given."""
    if (data is None) == (shape is None):
        raise ValueError("volume() takes data or shape, not both or neither")
    if data is None:
        if format not in ("R32F", "R32UI", "RGBA16F", "RGBA32F"):
            raise ValueError(f"empty volumes are R32F, R32UI, RGBA16F or RGBA32F, not {format}")
        return tuple(int(n) for n in shape), format
    if data.ndim == 3:
        return data.shape, "R32F"
    if data.ndim == 4 and data.shape[3] == 4:
        return data.shape[:3], "RGBA32F"
    raise ValueError(f"volume data must be (depth, height, width[, 4]), not {data.shape}")


def check_bindings(kernel: Kernel, textures: dict[str, Texture], constants: dict[str, Any]) -> None:
    """Fail loudly on a missing or misspelt binding instead of reading garbage."""
    wanted = {i.name for i in kernel.images} | {s.name for s in kernel.samplers}
    if set(textures) != wanted:
        raise ValueError(f"{kernel.name}: textures {sorted(textures)} != declared {sorted(wanted)}")
    declared = {c.name for c in kernel.constants}
    if set(constants) != declared:
        raise ValueError(f"{kernel.name}: constants {sorted(constants)} != declared {sorted(declared)}")
    for image in kernel.images:
        if textures[image.name].format != image.format:
            raise ValueError(f"{kernel.name}: '{image.name}' is {textures[image.name].format}, kernel wants {image.format}")


def column_major(value: Any) -> list[float]:
    """A 4x4 matrix (numpy, row-major, or mathutils) as 16 floats, column-major (no float() per element)."""
    return np.asarray(value, dtype=np.float32).reshape(4, 4).T.ravel().tolist()


_LINE_REFS = re.compile(r"(?:\b0|python_shader\.glsl|ERROR):(\d+)")


def compile_error(kernel: Kernel, log: str, body_line_offset: int = 0) -> ShaderCompileError:
    """Build the error a user sees: kernel file, mapped lines, the compiler's log."""
    origin = kernel.source_lines()
    mapped = []
    for match in _LINE_REFS.finditer(log):
        line = int(match.group(1)) - 1 - body_line_offset
        if 0 <= line < len(origin):
            mapped.append(f"{origin[line][0]}:{origin[line][1]}")
    where = f" (at {', '.join(dict.fromkeys(mapped))})" if mapped else ""
    excerpt = "\n".join(log.strip().splitlines()[-20:]) or "(the compiler printed no log)"
    return ShaderCompileError(f"Shader '{kernel.path}' failed to compile{where}:\n{excerpt}")
