/* LSD radix sort, step 3 of a digit: each workgroup moves one tile of
 * RADIX_TILE pairs to their slots for this digit, stably.
 *
 * The tile is sorted in shared memory by (digit, position in the tile), so
 * pairs of one digit keep their order; the j-th pair of digit d in the tile
 * goes to offsets[d * tiles + tile] + j (offsets: the exclusive scan of
 * radix_count's counts).  Slots beyond count get digit 256 and stay home. */

const uint NO_DIGIT = 256u;

void main()
{
  int lane = int(gl_LocalInvocationIndex); /* 256 invocations */
  int tiles = (count + RADIX_TILE - 1) / RADIX_TILE;
  int tile = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
  bool in_range = tile < tiles;
  int width = imageSize(keys).x;

  s_hist[lane] = 0u;
  barrier();
  for (int i = lane; i < RADIX_TILE; i += 256) {
    int element = tile * RADIX_TILE + i;
    bool real = in_range && element < count;
    ivec2 texel = particle_texel(element, width);
    uint key = real ? imageLoad(keys, texel).x : 0u;
    uint digit = real ? (key >> uint(shift)) & 255u : NO_DIGIT;
    s_keys[i] = key;
    s_indices[i] = real ? imageLoad(indices, texel).x : 0u;
    s_order[i] = (digit << 16u) | uint(i);
    if (real) {
      atomicAdd(s_hist[digit], 1u);
    }
  }
  barrier();

  /* First position of each digit in the sorted tile: exclusive scan of s_hist. */
  s_start[lane] = s_hist[lane];
  barrier();
  for (int offset = 1; offset < 256; offset *= 2) {
    uint before = lane >= offset ? s_start[lane - offset] : 0u;
    barrier();
    s_start[lane] += before;
    barrier();
  }
  s_start[lane] -= s_hist[lane];

  /* All-ascending bitonic sort of the (digit, position) words (see sort_local.glsl). */
  for (int size = 2; size <= RADIX_TILE; size *= 2) {
    for (int stride = size / 2; stride >= 1; stride /= 2) {
      barrier();
      for (int c = lane; c < RADIX_TILE / 2; c += 256) {
        int lower = (c / stride) * 2 * stride + c % stride;
        int upper = 2 * stride == size ? lower ^ (size - 1) : lower + stride;
        uint a = s_order[lower], b = s_order[upper];
        if (a > b) {
          s_order[lower] = b;
          s_order[upper] = a;
        }
      }
    }
  }
  barrier();

  int out_width = imageSize(sorted_keys).x;
  int offsets_width = imageSize(offsets).x;
  for (int j = lane; j < RADIX_TILE; j += 256) {
    uint word = s_order[j];
    uint digit = word >> 16u;
    if (!in_range || digit == NO_DIGIT) {
      continue;
    }
    uint i = word & 0xFFFFu;
    uint first = imageLoad(offsets, particle_texel(int(digit) * tiles + tile, offsets_width)).x;
    ivec2 texel = particle_texel(int(first + uint(j) - s_start[digit]), out_width);
    imageStore(sorted_keys, texel, uvec4(s_keys[i]));
    imageStore(sorted_indices, texel, uvec4(s_indices[i]));
  }
}
