/* One level of the hierarchical scan: every workgroup scans its block of
 * SCAN_BLOCK consecutive elements in shared memory and writes the block's
 * total to block_sums, which the next level scans in turn (scan.py).
 *
 * Element i lives at texel (i % width, i / width) of its image.  Each thread
 * owns two neighbours: it adds them, the pair sums are scanned Hillis-Steele
 * style across the workgroup, and the pair is expanded back.  Sums are uint32
 * and wrap around modulo 2^32, like the numpy reference. */

uint load_element(int i, int n)
{
  return i < n ? imageLoad(scan_in, particle_texel(i, imageSize(scan_in).x)).x : 0u;
}

void main()
{
  int t = int(gl_LocalInvocationID.x);
  int block = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
  int first = block * SCAN_BLOCK + 2 * t;
  uint a = load_element(first, count);
  uint b = load_element(first + 1, count);

  pair_sums[t] = a + b;
  barrier();
  for (int offset = 1; offset < SCAN_THREADS; offset <<= 1) {
    uint left = t >= offset ? pair_sums[t - offset] : 0u;
    barrier();
    pair_sums[t] += left;
    barrier();
  }
  uint before = (t > 0 ? pair_sums[t - 1] : 0u) + (inclusive != 0 ? a : 0u);

  int width = imageSize(scan_out).x;
  if (first < count) {
    imageStore(scan_out, particle_texel(first, width), uvec4(before));
  }
  if (first + 1 < count) {
    imageStore(scan_out, particle_texel(first + 1, width), uvec4(before + (inclusive != 0 ? b : a)));
  }
  if (t == SCAN_THREADS - 1) {
    imageStore(block_sums, particle_texel(block, imageSize(block_sums).x), uvec4(pair_sums[t]));
  }
}
