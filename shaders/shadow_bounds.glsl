/* The lit particles' bounds (centers +- radii), for the shadow volume's
 * placement with no CPU readback: a min/max tree in shared memory per
 * workgroup, then one atomic max per bound into shadow_bounds (R32UI).
 * Floats become uints that order as the floats do (ordered_bits); a minimum
 * is stored as the maximum of its negation, so one clear to 0 (below every
 * float's code) empties all six texels: BOUND_LOWER + axis, BOUND_UPPER + axis. */

uint ordered_bits(float x)
{
  uint bits = floatBitsToUint(x);
  return (bits & 0x80000000u) != 0u ? ~bits : bits | 0x80000000u;
}

void main()
{
  int slot = particle_index(imageSize(pos_age).x);
  uint local = gl_LocalInvocationIndex;
  vec3 center;
  float radius;
  bool alive = shadow_particle(slot, center, radius);
  s_lower[local] = alive ? vec4(center - radius, 0.0) : vec4(1.0 / 0.0);
  s_upper[local] = alive ? vec4(center + radius, 0.0) : vec4(-1.0 / 0.0);
  barrier();
  for (uint half_size = gl_WorkGroupSize.x / 2u; half_size > 0u; half_size >>= 1u) {
    if (local < half_size) {
      s_lower[local] = min(s_lower[local], s_lower[local + half_size]);
      s_upper[local] = max(s_upper[local], s_upper[local + half_size]);
    }
    barrier();
  }
  if (local == 0u && s_lower[0].x <= s_upper[0].x) {
    for (int axis = 0; axis < 3; axis++) {
      imageAtomicMax(shadow_bounds, ivec2(BOUND_LOWER + axis, 0), ordered_bits(-s_lower[0][axis]));
      imageAtomicMax(shadow_bounds, ivec2(BOUND_UPPER + axis, 0), ordered_bits(s_upper[0][axis]));
    }
  }
}
