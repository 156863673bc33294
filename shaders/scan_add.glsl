/* Adds each block's scanned offset (the exclusive scan of the block sums one
 * level up) to every element of the block: the down-sweep of scan.py. */

void main()
{
  int block = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
  uint offset = imageLoad(block_offsets, particle_texel(block, imageSize(block_offsets).x)).x;
  int width = imageSize(scan_out).x;
  for (int k = 0; k < 2; k++) {
    int i = block * SCAN_BLOCK + k * SCAN_THREADS + int(gl_LocalInvocationID.x);
    if (i < count) {
      ivec2 texel = particle_texel(i, width);
      imageStore(scan_out, texel, imageLoad(scan_out, texel) + uvec4(offset));
    }
  }
}
