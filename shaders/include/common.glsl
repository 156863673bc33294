/* Shared helpers: particle indexing over 2D state images. */

/* Particle i lives at texel (i % width, i / width) of every state image.
 * Widths are mostly powers of two (state images, and every linear image
 * longer than one row): a mask and a shift then, where an integer division
 * by a value the compiler cannot see costs about twenty instructions. */
ivec2 particle_texel(int index, int width)
{
  if ((width & (width - 1)) == 0) {
    return ivec2(index & (width - 1), index >> findLSB(width));
  }
  return ivec2(index % width, index / width);
}

#if !defined(GPU_VERTEX_SHADER) && !defined(GPU_FRAGMENT_SHADER)
/* Linear particle index of this invocation, dispatched as (width / 256, rows). */
int particle_index(int width)
{
  return int(gl_GlobalInvocationID.y) * width + int(gl_GlobalInvocationID.x);
}

/* The opening of a kernel a thread a slot: this invocation's slot and its
 * texel in images `width` texels wide; false past `bound`, where the dispatch,
 * rounded up to whole workgroups, runs beyond the last slot. */
bool particle_slot(int width, int bound, out int index, out ivec2 texel)
{
  index = particle_index(width);
  texel = particle_texel(index, width);
  return index < bound;
}
#endif

bool is_finite(vec3 v)
{
  return !any(isnan(v)) && !any(isinf(v));
}

/* Exact float arithmetic where a float becomes a pixel, a sort key or an
 * integer color.  GPU compilers may fuse a * b + c into one rounding, reorder
 * sums and divide through an approximate reciprocal (GLSL allows 2.5 ulp);
 * the numpy reference (reference/seam/exact.py) rounds every operation as IEEE
 * float32 does.  One ulp apart is enough to move a value across a pixel edge
 * or a rounding boundary of the integer colors, so these paths are written
 * out in a fixed order and marked `precise`. */

/* hi + lo == x exactly, hi holding the upper 12 significant bits (Veltkamp's split). */
void split_float(float x, out float hi, out float lo)
{
  precise float scaled = 4097.0 * x;
  precise float high = scaled - (scaled - x);
  precise float low = x - high;
  hi = high;
  lo = low;
}

/* a / b correctly rounded for normal operands of moderate size.  The quotient
 * from `/` may be a few ulps off; its exact remainder a - b * q (Dekker's
 * product, unfused plain arithmetic: fma() is not fused on every host) says by
 * how much, and one correction rounds to the quotient IEEE division gives. */
float div_rn(float a, float b)
{
  precise float q = a / b;
  float b_hi, b_lo, q_hi, q_lo;
  split_float(b, b_hi, b_lo);
  split_float(q, q_hi, q_lo);
  precise float product = b * q;
  precise float product_error = ((b_hi * q_hi - product) + b_hi * q_lo + b_lo * q_hi) + b_lo * q_lo;
  precise float remainder = (a - product) - product_error;
  precise float quotient = q + remainder / b;
  return quotient;
}

/* sqrt(x) correctly rounded for normal x >= 0 of moderate size (0 stays 0): `sqrt` may be an ulp or two off; the
 * exact residual x - s * s (Dekker's product, as div_rn) corrects it by a Newton step, to what IEEE sqrt gives. */
float sqrt_rn(float x)
{
  precise float s = sqrt(x);
  float s_hi, s_lo;
  split_float(s, s_hi, s_lo);
  precise float square = s * s;
  precise float square_error = ((s_hi * s_hi - square) + s_hi * s_lo + s_lo * s_hi) + s_lo * s_lo;
  precise float residual = (x - square) - square_error;
  precise float root = s > 0.0 ? s + residual / (2.0 * s) : s;
  return root;
}

/* |v| correctly rounded from its squares summed x, y, z in this order, unfused (exact.py's length). */
float length_rn(vec3 v)
{
  precise float squares = (v.x * v.x + v.y * v.y) + v.z * v.z;
  return sqrt_rn(squares);
}

/* m * vec4(p, 1.0), summed column by column in this order, unfused. */
vec4 transform_point(mat4 m, vec3 p)
{
  precise vec4 result = ((m[0] * p.x + m[1] * p.y) + m[2] * p.z) + m[3];
  return result;
}

/* Window coordinates (pixels; depth 0 near .. 1 far) of a clip position with w > 0. */
vec3 window_coordinates(vec4 clip, ivec2 size)
{
  precise vec3 ndc = vec3(div_rn(clip.x, clip.w), div_rn(clip.y, clip.w), div_rn(clip.z, clip.w));
  precise vec3 window = vec3((ndc.xy * 0.5 + 0.5) * vec2(size), ndc.z * 0.5 + 0.5);
  return window;
}

/* Zeros and denormals of either sign become +0.  Some GPUs flush denormal
 * operands and results to zero and others keep them: flushing inputs where
 * the result becomes an integer makes both give the same answer. */
float flush_denormals(float x)
{
  return (floatBitsToUint(x) & 0x7F800000u) == 0u ? 0.0 : x;
}

vec3 flush_denormals(vec3 v)
{
  return vec3(flush_denormals(v.x), flush_denormals(v.y), flush_denormals(v.z));
}
