/* One digit pass of the stable binning, step 3: each workgroup moves its
 * tile's (key, value) pairs to their slots for this digit, in item order
 * within a digit, so the pass is stable and bitwise reproducible.
 *
 * Ranks come from a workgroup-wide "match" in shared memory instead of
 * atomic counters (whose order would vary from run to run): per round every
 * thread sets its bit in its digit's BIN_THREADS-bit mask (atomicOr gives
 * the same masks in any order); its rank among the round's equal digits is
 * the number of bits below its own, plus that digit's count from earlier
 * rounds.  The tile is then reordered by digit in shared memory and written
 * out in runs: the j-th pair of digit d goes to
 * digit_offsets[d * tiles + tile] + j (the exclusive scan of bin_digits'
 * counts).  index_values != 0: the values are the item indices themselves. */

const int MASK_WORDS = BIN_THREADS / 32;

void main()
{
  int t = int(gl_LocalInvocationIndex);
  int tile = bin_tile_index();
  int tiles = bin_tiles();
  bool tile_in_range = tile < tiles;
  for (int w = t; w < BIN_SLOTS * MASK_WORDS; w += BIN_THREADS) {
    s_masks[w] = 0u;
  }
  for (int d = t; d < BIN_SLOTS; d += BIN_THREADS) {
    s_run[d] = 0u;
  }
  barrier();

  int width = imageSize(keys).x;
  uint lane_word = uint(t) >> 5u;
  uint lane_bit = 1u << (uint(t) & 31u);
  uint my_keys[BIN_ROUNDS];
  uint my_values[BIN_ROUNDS];
  uint my_ranks[BIN_ROUNDS];
  for (int round = 0; round < BIN_ROUNDS; round++) {
    int i = bin_item(round);
    bool real = tile_in_range && i < count;
    ivec2 texel = particle_texel(i, width);
    uint key = real ? imageLoad(keys, texel).x : 0u;
    my_keys[round] = key;
    my_values[round] = real ? (index_values != 0 ? uint(i) : imageLoad(values, texel).x) : 0u;
    uint digit = bin_digit(key);
    uint word = digit * uint(MASK_WORDS) + lane_word;
    if (real) {
      atomicOr(s_masks[word], lane_bit);
    }
    barrier();
    uint rank = NO_ITEM;
    if (real) {
      rank = s_run[digit] + uint(bitCount(s_masks[word] & (lane_bit - 1u)));
      for (uint w = digit * uint(MASK_WORDS); w < word; w++) {
        rank += uint(bitCount(s_masks[w]));
      }
    }
    my_ranks[round] = rank;
    barrier();
    for (int d = t; d < BIN_SLOTS; d += BIN_THREADS) {
      uint seen = 0u;
      for (int w = d * MASK_WORDS; w < (d + 1) * MASK_WORDS; w++) {
        seen += uint(bitCount(s_masks[w]));
        s_masks[w] = 0u;
      }
      s_run[d] += seen;
    }
    barrier();
  }

  /* s_run is now the tile's histogram: its exclusive scan is where each digit starts in the tile. */
  for (int d = t; d < BIN_SLOTS; d += BIN_THREADS) {
    s_start[d] = s_run[d];
  }
  barrier();
  for (int offset = 1; offset < BIN_SLOTS; offset <<= 1) {
    uint before[BIN_SLOTS_PER_THREAD];
    for (int k = 0; k < BIN_SLOTS_PER_THREAD; k++) {
      int d = t + k * BIN_THREADS;
      before[k] = d < BIN_SLOTS && d >= offset ? s_start[d - offset] : 0u;
    }
    barrier();
    for (int k = 0; k < BIN_SLOTS_PER_THREAD; k++) {
      int d = t + k * BIN_THREADS;
      if (d < BIN_SLOTS) {
        s_start[d] += before[k];
      }
    }
    barrier();
  }
  int offsets_width = imageSize(digit_offsets).x;
  for (int d = t; d < BIN_SLOTS; d += BIN_THREADS) {
    uint first = s_start[d] - s_run[d];
    uint global_first = tile_in_range ? imageLoad(digit_offsets, particle_texel(d * tiles + tile, offsets_width)).x : 0u;
    s_base[d] = global_first - first; /* slot of tile position j of digit d: s_base[d] + j */
    s_start[d] = first;
  }
  barrier();
  for (int round = 0; round < BIN_ROUNDS; round++) {
    if (my_ranks[round] != NO_ITEM) {
      uint position = s_start[bin_digit(my_keys[round])] + my_ranks[round];
      s_keys[position] = my_keys[round];
      s_values[position] = my_values[round];
    }
  }
  barrier();

  int tile_items = tile_in_range ? min(BIN_TILE, count - tile * BIN_TILE) : 0;
  int out_width = imageSize(sorted_keys).x;
  for (int round = 0; round < BIN_ROUNDS; round++) {
    int j = round * BIN_THREADS + t;
    if (j < tile_items) {
      uint key = s_keys[j];
      ivec2 texel = particle_texel(int(s_base[bin_digit(key)] + uint(j)), out_width);
      imageStore(sorted_keys, texel, uvec4(key));
      imageStore(sorted_values, texel, uvec4(s_values[j]));
    }
  }
}
