/* Up-sweep of the reduce-then-scan: every workgroup sums its block of
 * SCAN_BLOCK consecutive elements (a shared-memory tree) into block_sums,
 * which the next level reduces in turn (scan.py).  Sums wrap modulo 2^32. */

void main()
{
  int t = int(gl_LocalInvocationID.x);
  uint sum = 0u;
  for (int round = 0; round < SCAN_RUN; round++) {
    sum += load_element(scan_element(round), count);
  }
  uint total = workgroup_sum(sum);
  if (t == 0) {
    int block = scan_block_index();
    imageStore(block_sums, particle_texel(block, imageSize(block_sums).x), uvec4(total));
  }
}
