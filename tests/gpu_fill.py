"""Test-only kernel: fills an R32UI image on the GPU (Blender uploads float data only)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from addon.engine.reference.seam.random import pcg_hash
from addon.engine.seam.kernels import Constant, Image, Kernel, include_source

ZEROS, ONES, MAX, RANDOM, RANDOM_BYTE = range(5)


@dataclass(frozen=True)
class InlineKernel(Kernel):
    """A test kernel whose body is ``source``, after the records it binds (records.py) and its includes."""

    source: str = ""

    def body(self) -> str:
        return self.records + include_source(self.includes) + self.source


FILL = InlineKernel(
    "fill_for_test",
    images=(Image("values", "R32UI", "WRITE"),),
    constants=(Constant("INT", "count"), Constant("INT", "mode"), Constant("INT", "seed")),
    includes=("common.glsl", "random.glsl"),
    source="""
void main()
{
  int i = int(gl_GlobalInvocationID.y) * 65535 * 256 + int(gl_GlobalInvocationID.x);
  if (i >= count) {
    return;
  }
  uint v = mode == 0 ? 0u : mode == 1 ? 1u : mode == 2 ? 0xFFFFFFFFu : pcg_hash(uint(i) ^ uint(seed));
  v = mode == 4 ? v & 255u : v;
  imageStore(values, particle_texel(i, imageSize(values).x), uvec4(v));
}
""",
)


def fill(host, texture, count: int, mode: int, seed: int = 0) -> None:
    groups = -(-count // 256)
    host.dispatch(FILL, (min(groups, 65535), -(-groups // 65535), 1), {"values": texture},
                  {"count": count, "mode": mode, "seed": seed})


UPLOAD = InlineKernel(
    "upload_for_test",
    images=(Image("halves", "RGBA32F", "READ"), Image("values", "R32UI", "WRITE")),
    constants=(Constant("INT", "count"),),
    source="""
void main()
{
  int i = int(gl_GlobalInvocationID.y) * 65535 * 256 + int(gl_GlobalInvocationID.x);
  if (i >= count) {
    return;
  }
  ivec2 texel = particle_texel(i, imageSize(values).x);
  vec4 halves = imageLoad(halves, texel);
  imageStore(values, texel, uvec4((uint(halves.y) << 16u) | uint(halves.x)));
}
""",
)


def upload(host, name: str, values, width: int | None = None):
    """An R32UI image holding ``values`` (any uint32), through float halves and a kernel."""
    values = np.asarray(values, dtype=np.uint32).ravel()
    count = len(values)
    width = width or min(max(count, 1), 4096)
    rows = max(1, -(-count // width))
    halves = np.zeros((rows * width, 4), np.float32)
    halves[:count, 0] = values & 0xFFFF
    halves[:count, 1] = values >> 16
    texture = host.texture(name, width, rows, "R32UI")
    groups = max(1, -(-count // 256))
    host.dispatch(UPLOAD, (min(groups, 65535), -(-groups // 65535), 1),
                  {"halves": host.texture("halves", width, rows, "RGBA32F", halves.reshape(rows, width, 4)),
                   "values": texture}, {"count": count})
    return texture


def expected(count: int, mode: int, seed: int = 0) -> np.ndarray:
    if mode in (RANDOM, RANDOM_BYTE):
        values = pcg_hash(np.arange(count, dtype=np.uint32) ^ np.uint32(seed))
        return values & np.uint32(255) if mode == RANDOM_BYTE else values
    return np.full(count, (0, 1, 0xFFFFFFFF)[mode], dtype=np.uint32)
