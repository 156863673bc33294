/* Where a pixel's two accumulation words live (color_pack.glsl says what they hold).
 *
 * Default: two R32UI images, accum_hi and accum_lo.  With ACCUM_PAIRED (the
 * product's): one R32UI image holding word 2i (hi) and 2i + 1 (lo) of the
 * pixel i = y * width + x in raster order, 2^ACCUM_ROW_BITS words a row, so
 * that a particle's two atomics land in one memory sector (and one image
 * slot of Blender's eight is free).  Raster order rather than a
 * target-shaped image: the driver tiles a 2D image in blocks a few rows
 * high, so a clump of a few pixels a side sat in a few blocks, whose
 * atomics queued at a few L2 slices; here its rows lie thousands of words
 * apart.  Chosen by measurement: clumps gained most, spread and normal lost
 * a little, in the resolve, whose 16x16 tiles now read 16 rows apart (other
 * tile shapes were slower in both layouts; bench/results/nvidia-h100-80gb-
 * hbm3-pcie-sse2-2026-11-25-splat-layout-ab.json). */

#ifdef ACCUM_PAIRED
int accum_word(ivec2 pixel)
{
  return 2 * (pixel.y * target_size.x + pixel.x);
}
ivec2 accum_texel(int word)
{
  return ivec2(word & ((1 << ACCUM_ROW_BITS) - 1), word >> ACCUM_ROW_BITS);
}
#  define ACCUM_HI_TEXEL(pixel) accum_texel(accum_word(pixel))
#  define ACCUM_LO_TEXEL(pixel) accum_texel(accum_word(pixel) + 1)
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

/* Adds integer color ``q`` (quantize_color) at ``pixel`` with the two independent atomics and, when
 * G_low wrapped off the top of the low word, the rare third carrying one into G_high; returns the
 * overflows it caused (color_pack.glsl). */
uint accum_add_color(ivec2 pixel, uvec3 q)
{
  uint add_hi = packed_hi(q);
  uint add_lo = packed_lo(q);
  uint old_hi = accum_add_hi(pixel, add_hi);
  uint old_lo = accum_add_lo(pixel, add_lo);
  uint overflows = uint((old_hi & LOW21) + q.r > LOW21) + uint((old_lo & LOW21) + q.b > LOW21) +
                   uint(old_hi + add_hi < add_hi);
  if (old_lo + add_lo < add_lo) {
    uint old_carry = accum_add_hi(pixel, 1u << 21u);
    overflows += uint(old_carry + (1u << 21u) < (1u << 21u));
  }
  return overflows;
}
