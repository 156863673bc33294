"""common.glsl's exact helpers on this GPU against numpy's IEEE float32: div_rn and transform_point."""

import numpy as np

from addon.engine.reference.seam.exact import transform_points
from addon.engine.seam.kernels import Constant, Image
from tests.gpu_fill import InlineKernel

F = np.float32

DIVIDE = InlineKernel(
    "divide_for_test",
    images=(Image("operands", "RGBA32F", "READ"), Image("results", "RGBA32F", "WRITE")),
    constants=(Constant("INT", "count"), Constant("MAT4", "matrix")),
    includes=("common.glsl",),
    source="""
void main()
{
  int i = int(gl_GlobalInvocationID.x);
  if (i >= count) {
    return;
  }
  vec4 v = imageLoad(operands, ivec2(i, 0));
  vec4 clip = transform_point(matrix, v.xyz);
  imageStore(results, ivec2(i, 0), vec4(div_rn(v.x, v.y), div_rn(v.z, v.w), clip.x, clip.w));
}
""",
)


def test_div_rn_and_transform_point_round_as_ieee_float32(host, rng):
    count = 4096
    operands = np.empty((count, 4), F)
    # Quotients over many magnitudes, small divisors included (the case an fma that does not fuse breaks).
    operands[:, 0] = rng.uniform(-1, 1, count) * F(10.0) ** rng.integers(-6, 7, count)
    operands[:, 1] = rng.uniform(0.01, 1, count) * F(10.0) ** rng.integers(-6, 7, count)
    operands[:, 2] = rng.random(count, dtype=F)
    operands[:, 3] = rng.uniform(1e-3, 1.0, count)
    matrix = rng.standard_normal((4, 4)).astype(F)
    source = host.texture("operands", count, 1, "RGBA32F", operands.reshape(1, count, 4))
    results = host.texture("results", count, 1, "RGBA32F")
    host.dispatch(DIVIDE, (count // 256, 1, 1), {"operands": source, "results": results},
                  {"count": count, "matrix": matrix})
    got = host.read(results).reshape(count, 4)
    np.testing.assert_array_equal(got[:, 0], operands[:, 0] / operands[:, 1])
    np.testing.assert_array_equal(got[:, 1], operands[:, 2] / operands[:, 3])
    clip = transform_points(matrix, operands[:, :3])
    np.testing.assert_array_equal(got[:, 2], clip[:, 0])
    np.testing.assert_array_equal(got[:, 3], clip[:, 3])
