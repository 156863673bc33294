/* R21G22B21 color packed in two uint32 words that take independent atomic adds.
 *
 *   accum_hi = R[21 bits] | G_high[11 bits] << 21
 *   accum_lo = B[21 bits] | G_low [11 bits] << 21
 *
 * G_low overflowing its 11 bits falls off the top of accum_lo; the adder sees
 * that in the value the atomic returned and adds the carry to G_high (the rare
 * third atomic).  R, B or G_high overflowing are counted, not clamped.
 * CHANNEL_MAX_R, _G, _B (21, 22 and 21 bits set) come from tables.py. */

const uint LOW21 = CHANNEL_MAX_R; /* the low 21 bits of a word: R of accum_hi, B (as wide) of accum_lo */
const uint LOW11 = 0x7FFu;

vec3 unpack_color(uint hi, uint lo)
{
  uint r = hi & LOW21;
  uint g = ((hi >> 21u) << 11u) | (lo >> 21u);
  uint b = lo & LOW21;
  return vec3(float(r), float(g), float(b));
}

/* HDR color to the integers the atomics add: scaled by Imax / Emax, clamped
 * to each channel's bits, rounded to nearest (one rounding, see div_rn). */
uvec3 quantize_color(vec3 color, vec3 scale)
{
  precise vec3 scaled = clamp(color * scale, vec3(0.0),
                              vec3(float(CHANNEL_MAX_R), float(CHANNEL_MAX_G), float(CHANNEL_MAX_B)));
  precise vec3 rounded = scaled + 0.5;
  return uvec3(rounded);
}

/* The two words an add of integer color q adds: R | G_high << 21 and B | G_low << 21. */
uint packed_hi(uvec3 q)
{
  return q.r | ((q.g >> 11u) << 21u);
}

uint packed_lo(uvec3 q)
{
  return q.b | ((q.g & LOW11) << 21u);
}

/* The 2x1 R32UI stats image the splat and resolve report into: texels (STAT_OVERFLOW, 0) and
 * (STAT_PEAK, 0) (records.FRAME_STATS). */
