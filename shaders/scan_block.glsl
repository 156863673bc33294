/* Down-sweep of the reduce-then-scan: every workgroup scans its block of
 * SCAN_BLOCK elements in shared memory (each thread a run of SCAN_RUN, the
 * run totals Hillis-Steele style), adds the block's offset (the exclusive
 * scan of the block totals one level up) and writes the result.  At the top
 * level (one block, no offsets) the block's total is the grand total,
 * written to scan_total.  Under the top (summed_offsets: block_offsets holds
 * the top block's totals, not their scan) every block sums the totals before
 * its own, and the last writes the grand total.  Element i lives at texel
 * (i % width, i / width) of its image; sums wrap modulo 2^32 like the numpy
 * reference. */

/* Shared slot of block element j, one word of padding per 32: a thread's run is read without bank conflicts. */
int padded(int j)
{
  return j + (j >> 5);
}

/* The sum of the first `before` totals of block_offsets (at most SCAN_BLOCK: one block). */
uint summed_offset(int before)
{
  int width = imageSize(block_offsets).x;
  uint sum = 0u;
  for (int i = int(gl_LocalInvocationID.x); i < before; i += SCAN_THREADS) {
    sum += imageLoad(block_offsets, particle_texel(i, width)).x;
  }
  return workgroup_sum(sum);
}

void main()
{
  int t = int(gl_LocalInvocationID.x);
  int block = scan_block_index();
  int last = (count - 1) / SCAN_BLOCK;
  uint summed = 0u; /* the totals above before this block's, under the top */
  if (summed_offsets != 0) {
    summed = summed_offset(min(block, last + 1));
  }
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
  if (summed_offsets != 0) {
    before += summed;
  }
  else if (top == 0) {
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
  if ((top != 0 || (summed_offsets != 0 && block == last)) && t == SCAN_THREADS - 1) {
    imageStore(scan_total, ivec2(0, 0), uvec4(summed + thread_sums[t]));
  }
}
