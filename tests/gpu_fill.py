"""Test-only kernel: fills an R32UI image on the GPU (Blender uploads float data only)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from addon.engine.kernels import Constant, Image, Kernel, include_source
from addon.engine.reference.random import pcg_hash

ZEROS, ONES, MAX, RANDOM = range(4)


@dataclass(frozen=True)
class InlineKernel(Kernel):
    source: str = ""

    def body(self) -> str:
        return include_source(self.includes) + self.source


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
  imageStore(values, particle_texel(i, imageSize(values).x), uvec4(v));
}
""",
)


def fill(host, texture, count: int, mode: int, seed: int = 0) -> None:
    groups = -(-count // 256)
    host.dispatch(FILL, (min(groups, 65535), -(-groups // 65535), 1), {"values": texture},
                  {"count": count, "mode": mode, "seed": seed})


def expected(count: int, mode: int, seed: int = 0) -> np.ndarray:
    if mode == RANDOM:
        return pcg_hash(np.arange(count, dtype=np.uint32) ^ np.uint32(seed))
    return np.full(count, (0, 1, 0xFFFFFFFF)[mode], dtype=np.uint32)
