/* One pass of a sorting network: each invocation owns one comparator and
 * swaps its pair when the lower key is greater (ties stay), so a pass is one
 * dispatch with no races.  Pass (p, k) of the odd-even merge sort merges runs
 * of p with comparators of stride k; addon/engine/primitives/sort_schedule.py has the
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
  Particle lo = load_particle(texel_lo), hi = load_particle(texel_hi);
  if (particle_key(lo) > particle_key(hi)) {
    store_particle(texel_lo, hi);
    store_particle(texel_hi, lo);
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
