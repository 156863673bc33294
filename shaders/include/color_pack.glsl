/* R21G22B21 color packed in two uint32 words that take independent atomic adds.
 *
 *   accum_hi = R[21 bits] | G_high[11 bits] << 21
 *   accum_lo = B[21 bits] | G_low [11 bits] << 21
 *
 * G_low overflowing its 11 bits falls off the top of accum_lo; the adder sees
 * that in the value the atomic returned and adds the carry to G_high (the rare
 * third atomic).  R, B or G_high overflowing are counted, not clamped. */

const uint R_MAX = 0x1FFFFFu; /* 21 bits */
const uint G_MAX = 0x3FFFFFu; /* 22 bits */
const uint LOW21 = 0x1FFFFFu;
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
  precise vec3 scaled = clamp(color * scale, vec3(0.0), vec3(float(R_MAX), float(G_MAX), float(R_MAX)));
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

/* Texels of the 2x1 R32UI stats image the splat and resolve report into. */
const int STAT_OVERFLOW = 0; /* overflowing adds this frame */
const int STAT_PEAK = 1;     /* float bits of the brightest accumulated channel */
