/* One pass of a sorting network: each invocation owns one comparator and
 * swaps its pair when the lower key is greater (ties stay), so a pass is one
 * dispatch with no races.  Pass (p, k) of the odd-even merge sort merges runs
 * of p with comparators of stride k; addon/engine/sort_schedule.py has the
 * schedule and the same arithmetic in numpy.
 *
 * Comparators whose upper element lies at or beyond count are left out: the
 * missing elements act as +inf padding that never moves.
 *
 * SORT_DIRECT swaps the particle state texels themselves, keyed on the fly;
 * otherwise the pass swaps (key, index) pairs. */

void main()
{
  int t = int(gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x + gl_GlobalInvocationID.x);
  if (t >= slots) {
    return;
  }
  int lower;
  if (k == p) {
    lower = (t / p) * 2 * p + t % p;
  }
  else {
    int r = t % (p - k);
    lower = (t / (p - k)) * 2 * p + k + (r / k) * 2 * k + r % k;
  }
  int upper = lower + k;
  if (upper >= count) {
    return;
  }
#ifdef SORT_DIRECT
  int width = imageSize(pos_age).x;
  ivec2 texel_lo = particle_texel(lower, width), texel_hi = particle_texel(upper, width);
  vec4 pos_lo = imageLoad(pos_age, texel_lo), pos_hi = imageLoad(pos_age, texel_hi);
  vec4 vel_lo = imageLoad(vel_life, texel_lo), vel_hi = imageLoad(vel_life, texel_hi);
  if (particle_key(pos_lo, vel_lo.w) > particle_key(pos_hi, vel_hi.w)) {
    imageStore(pos_age, texel_lo, pos_hi);
    imageStore(pos_age, texel_hi, pos_lo);
    imageStore(vel_life, texel_lo, vel_hi);
    imageStore(vel_life, texel_hi, vel_lo);
  }
#else
  int width = imageSize(keys).x;
  ivec2 texel_lo = particle_texel(lower, width), texel_hi = particle_texel(upper, width);
  uint key_lo = imageLoad(keys, texel_lo).x, key_hi = imageLoad(keys, texel_hi).x;
  if (key_lo > key_hi) {
    uint index_lo = imageLoad(indices, texel_lo).x;
    imageStore(indices, texel_lo, imageLoad(indices, texel_hi));
    imageStore(indices, texel_hi, uvec4(index_lo));
    imageStore(keys, texel_lo, uvec4(key_hi));
    imageStore(keys, texel_hi, uvec4(key_lo));
  }
#endif
}
