/* One digit pass of the stable binning, step 3: each workgroup moves its
 * tile's (key, value) pairs to their slots for this digit, in item order
 * within a digit, so the pass is stable and bitwise reproducible.
 *
 * Ranks come from a workgroup-wide "match" in shared memory instead of
 * atomic counters (whose order would vary from run to run): per round every
 * thread sets its bit in its digit's BIN_THREADS-bit mask (atomicOr gives
 * the same masks in any order); its rank among the round's equal digits is
 * the number of bits below its own, plus that digit's count from earlier
 * rounds (s_run), and the thread with no bit above its own moves s_run on.
 * Masks are stored word-major (word w of digit d at w * BIN_SLOTS + d: the
 * words one digit's readers touch spread over the banks) in two sets used in
 * turn, so a round clears the bits it set the round before instead of sweeping
 * every digit, and needs two barriers.  The tile is then reordered by digit
 * in shared memory (in the same words the masks used) and written out in
 * runs: the j-th pair of digit d goes to digit_offsets[d * tiles + tile] + j
 * (the exclusive scan of bin_digits' counts).  index_values != 0: the
 * values are the item indices themselves. */

const int MASK_WORDS = BIN_THREADS / 32;
const int MASK_SET = BIN_SLOTS * MASK_WORDS; /* words of one set of masks */
/* s_scratch: two sets of masks while ranking, then the reordered keys (first BIN_TILE words) and values. */
#define s_masks s_scratch
#define s_keys(j) s_scratch[j]
#define s_values(j) s_scratch[BIN_TILE + (j)]

void main()
{
  int t = int(gl_LocalInvocationIndex);
  int tile = bin_tile_index();
  int tiles = bin_tiles();
  int items = bin_items();
  if (tile * BIN_TILE >= items) {
    return; /* the whole workgroup: nothing of this tile is binned (its digit counts are zero) */
  }
  /* Always true past the return above, yet kept: without it the 16M radix sort was slower, the
   * driver's code differing (measured: bench/results/nvidia-h100-80gb-hbm3-pcie-sse2-2026-11-25-sort-ab.json). */
  bool tile_in_range = tile < tiles;
  for (int w = t; w < 2 * MASK_SET; w += BIN_THREADS) {
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
  /* Every load first, so that one memory latency is paid a tile instead of one a round (each round
   * waits at its barriers). */
  for (int round = 0; round < BIN_ROUNDS; round++) {
    int i = bin_item(round);
    bool real = tile_in_range && i < items;
    ivec2 texel = particle_texel(i, width);
    my_keys[round] = real ? imageLoad(keys, texel).x : 0u;
    my_values[round] = real ? (index_values != 0 ? uint(i) : imageLoad(values, texel).x) : 0u;
  }
  uint set_last_round = NO_ITEM; /* the word this thread set in the last round (NO_ITEM: none) */
  for (int round = 0; round < BIN_ROUNDS; round++) {
    bool real = tile_in_range && bin_item(round) < items;
    uint key = my_keys[round];
    uint digit = bin_digit(key);
    uint set = uint(round & 1) * uint(MASK_SET);
    uint word = set + lane_word * uint(BIN_SLOTS) + digit;
    if (real) {
      atomicOr(s_masks[word], lane_bit);
    }
    barrier();
    uint rank = NO_ITEM;
    bool last_of_digit = false;
    if (real) {
      uint mine = s_masks[word];
      uint below = uint(bitCount(mine & (lane_bit - 1u)));
      uint above = uint(bitCount(mine & ~((lane_bit - 1u) | lane_bit)));
      for (uint w = 0u; w < uint(MASK_WORDS); w++) {
        uint seen = w == lane_word ? 0u : uint(bitCount(s_masks[set + w * uint(BIN_SLOTS) + digit]));
        below += w < lane_word ? seen : 0u;
        above += w > lane_word ? seen : 0u;
      }
      rank = s_run[digit] + below;
      last_of_digit = above == 0u;
    }
    if (set_last_round != NO_ITEM) {
      s_masks[set_last_round] = 0u; /* the other set: read last round, set again next round */
    }
    set_last_round = real ? word : NO_ITEM;
    my_ranks[round] = rank;
    barrier();
    if (last_of_digit) {
      s_run[bin_digit(key)] = rank + 1u; /* read again after the next round's first barrier */
    }
  }
  barrier();

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
      s_keys(position) = my_keys[round];
      s_values(position) = my_values[round];
    }
  }
  barrier();

  int tile_items = tile_in_range ? min(BIN_TILE, items - tile * BIN_TILE) : 0;
  int out_width = imageSize(sorted_keys).x;
  for (int round = 0; round < BIN_ROUNDS; round++) {
    int j = round * BIN_THREADS + t;
    if (j < tile_items) {
      uint key = s_keys(j);
      ivec2 texel = particle_texel(int(s_base[bin_digit(key)] + uint(j)), out_width);
      imageStore(sorted_keys, texel, uvec4(key));
      imageStore(sorted_values, texel, uvec4(s_values(j)));
    }
  }
}
