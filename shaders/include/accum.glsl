/* Where a pixel's two accumulation words live (color_pack.glsl says what they hold).
 *
 * Default: two R32UI images, accum_hi and accum_lo.  With ACCUM_PAIRED: one
 * R32UI image twice as wide, hi at (2x, y) and lo at (2x + 1, y), so that a
 * particle's two atomics land in one memory sector (and one image slot of
 * Blender's eight is free). */

#ifdef ACCUM_PAIRED
#  define ACCUM_HI_TEXEL(pixel) ivec2((pixel).x * 2, (pixel).y)
#  define ACCUM_LO_TEXEL(pixel) ivec2((pixel).x * 2 + 1, (pixel).y)
#  define ACCUM_HI accum
#  define ACCUM_LO accum
#else
#  define ACCUM_HI_TEXEL(pixel) (pixel)
#  define ACCUM_LO_TEXEL(pixel) (pixel)
#  define ACCUM_HI accum_hi
#  define ACCUM_LO accum_lo
#endif

uint accum_add_hi(ivec2 pixel, uint value)
{
  return imageAtomicAdd(ACCUM_HI, ACCUM_HI_TEXEL(pixel), value);
}

uint accum_add_lo(ivec2 pixel, uint value)
{
  return imageAtomicAdd(ACCUM_LO, ACCUM_LO_TEXEL(pixel), value);
}
