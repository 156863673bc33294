/* The short-stride passes of the bitonic sort in one dispatch: each workgroup
 * sorts or merges a block of SORT_BLOCK pairs in shared memory.
 *
 * merge_size 0: sort each block completely (merge sizes 2 .. block).
 * merge_size > block: the strides below the block of that merge (sort_merge
 * has done the longer ones).
 *
 * Slots at or beyond count load as (KEY_LAST, KEY_LAST) padding: a swap only
 * moves a strictly greater key up, so padding stays beyond count and is never
 * stored. */

const uint PAD = 0xFFFFFFFFu;

void main()
{
  int threads = int(gl_WorkGroupSize.x);
  int base = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * SORT_BLOCK;
  int width = imageSize(keys).x;
  for (int i = int(gl_LocalInvocationID.x); i < SORT_BLOCK; i += threads) {
    bool real = base + i < count;
    ivec2 texel = particle_texel(base + i, width);
    s_keys[i] = real ? imageLoad(keys, texel).x : PAD;
    s_indices[i] = real ? imageLoad(indices, texel).x : PAD;
  }
  barrier();

  int first = merge_size == 0 ? 2 : merge_size;
  int last = merge_size == 0 ? SORT_BLOCK : merge_size;
  for (int size = first; size <= last; size *= 2) {
    for (int stride = min(size, SORT_BLOCK) / 2; stride >= 1; stride /= 2) {
      for (int c = int(gl_LocalInvocationID.x); c < SORT_BLOCK / 2; c += threads) {
        int lower = (c / stride) * 2 * stride + c % stride;
        int upper = 2 * stride == size ? lower ^ (size - 1) : lower + stride;
        uint key_lo = s_keys[lower], key_hi = s_keys[upper];
        if (key_lo > key_hi) {
          uint index_lo = s_indices[lower];
          s_keys[lower] = key_hi;
          s_keys[upper] = key_lo;
          s_indices[lower] = s_indices[upper];
          s_indices[upper] = index_lo;
        }
      }
      barrier();
    }
  }

  for (int i = int(gl_LocalInvocationID.x); i < SORT_BLOCK; i += threads) {
    if (base + i < count) {
      ivec2 texel = particle_texel(base + i, width);
      imageStore(keys, texel, uvec4(s_keys[i]));
      imageStore(indices, texel, uvec4(s_indices[i]));
    }
  }
}
