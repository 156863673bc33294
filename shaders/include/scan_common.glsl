/* Shared by the scan kernels: a workgroup of SCAN_THREADS threads owns a
 * block of SCAN_BLOCK = SCAN_RUN * SCAN_THREADS elements (scan.py).  Global
 * memory is read and written in SCAN_RUN coalesced rounds (element
 * k * SCAN_THREADS + t of the block in thread t); the scan itself works on
 * runs of SCAN_RUN in shared memory. */

int scan_block_index()
{
  return int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
}

/* Element `round * SCAN_THREADS + thread` of this workgroup's block. */
int scan_element(int round)
{
  return scan_block_index() * SCAN_BLOCK + round * SCAN_THREADS + int(gl_LocalInvocationID.x);
}

uint load_element(int i, int count)
{
  return i < count ? imageLoad(scan_in, particle_texel(i, imageSize(scan_in).x)).x : 0u;
}

/* Every thread's `sum` added up over the workgroup (a shared-memory tree over thread_sums), returned to every
 * thread; thread_sums is free again once it returns. */
uint workgroup_sum(uint sum)
{
  int t = int(gl_LocalInvocationID.x);
  thread_sums[t] = sum;
  barrier();
  for (int stride = SCAN_THREADS / 2; stride > 0; stride >>= 1) {
    if (t < stride) {
      thread_sums[t] += thread_sums[t + stride];
    }
    barrier();
  }
  uint total = thread_sums[0];
  barrier();
  return total;
}
