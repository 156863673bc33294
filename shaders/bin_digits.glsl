/* One digit pass of the stable binning, step 1: each workgroup counts the
 * digits (key >> shift) & (BIN_DIGITS - 1) of its tile in shared memory
 * (digit BIN_DIGITS: keys outside the bins, which stay last) and writes its
 * column digit-major, digit_counts[digit * tiles + tile], so that one
 * exclusive scan gives every (digit, tile) its first output slot.  Each
 * counter is written by one workgroup: no global atomics at all. */

void main()
{
  int t = int(gl_LocalInvocationIndex);
  for (int d = t; d < BIN_SLOTS; d += BIN_THREADS) {
    s_hist[d] = 0u;
  }
  barrier();
  int tile = bin_tile_index();
  int tiles = bin_tiles();
  int items = bin_items();
  int width = imageSize(keys).x;
  for (int round = 0; round < BIN_ROUNDS; round++) {
    int i = bin_item(round);
    if (tile < tiles && i < items) {
      uint digit = bin_digit(imageLoad(keys, particle_texel(i, width)).x);
      atomicAdd(s_hist[digit], 1u);
    }
  }
  barrier();
  if (tile < tiles) {
    int counts_width = imageSize(digit_counts).x;
    for (int d = t; d < BIN_SLOTS; d += BIN_THREADS) {
      imageStore(digit_counts, particle_texel(d * tiles + tile, counts_width), uvec4(s_hist[d]));
    }
  }
}
