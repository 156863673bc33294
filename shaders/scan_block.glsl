/* Down-sweep of the reduce-then-scan: every workgroup scans its block of
 * SCAN_BLOCK elements in shared memory (each thread a run of SCAN_RUN, the
 * run totals Hillis-Steele style), adds the block's offset (the exclusive
 * scan of the block totals one level up) and writes the result.  At the top
 * level (one block, no offsets) the block's total is the grand total,
 * written to scan_total.  Element i lives at texel (i % width, i / width) of
 * its image; sums wrap modulo 2^32 like the numpy reference. */

/* Shared slot of block element j, one word of padding per 32: a thread's run is read without bank conflicts. */
int padded(int j)
{
  return j + (j >> 5);
}

void main()
{
  int t = int(gl_LocalInvocationID.x);
  for (int round = 0; round < SCAN_RUN; round++) {
    block_values[padded(round * SCAN_THREADS + t)] = load_element(scan_element(round), count);
  }
  barrier();
  uint run[SCAN_RUN];
  uint run_total = 0u;
  for (int k = 0; k < SCAN_RUN; k++) {
    run[k] = block_values[padded(SCAN_RUN * t + k)];
    run_total += run[k];
  }

  thread_sums[t] = run_total;
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
  for (int k = 0; k < SCAN_RUN; k++) {
    block_values[padded(SCAN_RUN * t + k)] = inclusive != 0 ? before + run[k] : before;
    before += run[k];
  }
  barrier();

  int width = imageSize(scan_out).x;
  for (int round = 0; round < SCAN_RUN; round++) {
    int i = scan_element(round);
    if (i < count) {
      imageStore(scan_out, particle_texel(i, width), uvec4(block_values[padded(round * SCAN_THREADS + t)]));
    }
  }
  if (top != 0 && t == SCAN_THREADS - 1) {
    imageStore(scan_total, ivec2(0, 0), uvec4(thread_sums[t]));
  }
}
