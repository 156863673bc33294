/* Down-sweep of the reduce-then-scan: every workgroup scans its block of
 * SCAN_BLOCK elements in shared memory (each thread a run of four, the run
 * totals Hillis-Steele style), adds the block's offset (the exclusive scan of
 * the block totals one level up) and writes the result.  At the top level
 * (one block, no offsets) the block's total is the grand total, written to
 * scan_total.  Element i lives at texel (i % width, i / width) of its image;
 * sums wrap modulo 2^32 like the numpy reference. */

void main()
{
  int t = int(gl_LocalInvocationID.x);
  for (int round = 0; round < 4; round++) {
    block_values[round * SCAN_THREADS + t] = load_element(scan_element(round), count);
  }
  barrier();
  uvec4 v = uvec4(block_values[4 * t], block_values[4 * t + 1], block_values[4 * t + 2], block_values[4 * t + 3]);

  thread_sums[t] = v.x + v.y + v.z + v.w;
  barrier();
  for (int offset = 1; offset < SCAN_THREADS; offset <<= 1) {
    uint left = t >= offset ? thread_sums[t - offset] : 0u;
    barrier();
    thread_sums[t] += left;
    barrier();
  }
  uint before = t > 0 ? thread_sums[t - 1] : 0u;
  if (top == 0) {
    int block = scan_block_index();
    before += imageLoad(block_offsets, particle_texel(block, imageSize(block_offsets).x)).x;
  }
  uvec4 exclusive = uvec4(before, before + v.x, before + v.x + v.y, before + v.x + v.y + v.z);
  uvec4 result = inclusive != 0 ? exclusive + v : exclusive;
  for (int k = 0; k < 4; k++) {
    block_values[4 * t + k] = result[k];
  }
  barrier();

  int width = imageSize(scan_out).x;
  for (int round = 0; round < 4; round++) {
    int i = scan_element(round);
    if (i < count) {
      imageStore(scan_out, particle_texel(i, width), uvec4(block_values[round * SCAN_THREADS + t]));
    }
  }
  if (top != 0 && t == SCAN_THREADS - 1) {
    imageStore(scan_total, ivec2(0, 0), uvec4(thread_sums[t]));
  }
}
