/* LSD radix sort, step 1 of a digit: each workgroup counts the 8-bit digits
 * (key >> shift) & 255 of one tile of RADIX_TILE keys and writes them digit-
 * major, counts[digit * tiles + tile], so that one exclusive scan of counts
 * gives every (digit, tile) its first output slot. */

void main()
{
  uint digit_slot = gl_LocalInvocationIndex; /* 256 invocations: one per digit */
  s_hist[digit_slot] = 0u;
  barrier();
  int tiles = (count + RADIX_TILE - 1) / RADIX_TILE;
  int tile = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
  int width = imageSize(keys).x;
  for (int i = int(gl_LocalInvocationIndex); i < RADIX_TILE; i += 256) {
    int element = tile * RADIX_TILE + i;
    if (tile < tiles && element < count) {
      uint digit = (imageLoad(keys, particle_texel(element, width)).x >> uint(shift)) & 255u;
      atomicAdd(s_hist[digit], 1u); /* a plain index: NVIDIA's compiler rejected expressions here */
    }
  }
  barrier();
  if (tile < tiles) {
    imageStore(counts, particle_texel(int(digit_slot) * tiles + tile, imageSize(counts).x), uvec4(s_hist[digit_slot]));
  }
}
