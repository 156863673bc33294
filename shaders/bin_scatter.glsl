/* One digit pass of the stable binning, step 3: each workgroup moves its
 * tile's (key, value) pairs to their slots for this digit, in item order
 * within a digit, so the pass is stable and bitwise reproducible.
 *
 * Each group of 32 threads (GROUPS a workgroup) takes a run of GROUP_ITEMS
 * consecutive items of the tile, 32 a round.  Ranks come from a "match" in
 * shared memory instead of atomic counters (whose order would vary from run to
 * run): per round every thread sets its bit in its group's 32-bit mask of its
 * digit (atomicOr gives the same mask in any order); its rank among the
 * group's equal digits is the number of bits below its own plus that digit's
 * count in the group's earlier rounds (s_group_run), and the thread with no
 * bit above its own moves s_group_run on.  Masks come in two sets used in
 * turn, so a round clears the word it set the round before instead of
 * sweeping every digit, and needs two barriers.  Then each digit's groups are
 * laid end to end (s_group_run becomes each group's first rank of the
 * digit), the tile's digits too (s_start, a scan in segments of SEGMENT
 * digits), the tile is reordered by digit in shared memory (in the words the
 * masks used) and written out in runs: the j-th pair of digit d goes to
 * digit_offsets[d * tiles + tile] + j (the exclusive scan of bin_digits'
 * counts).  index_values != 0: the values are the item indices themselves. */

const int GROUPS = BIN_THREADS / 32;
const int GROUP_ITEMS = BIN_TILE / GROUPS; /* consecutive items of one group: BIN_ROUNDS rounds of 32 */
const int MASK_SET = GROUPS * BIN_SLOTS;   /* words of one set of masks: one a group and digit */
const int SEGMENT = SCAN_SEGMENT;          /* digits one thread sums while scanning the tile's digits */
const int SEGMENTS = (BIN_SLOTS + SEGMENT - 1) / SEGMENT;
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
  if (tile >= tiles || tile * BIN_TILE >= items) {
    return; /* the whole workgroup: nothing of this tile is binned (its digit counts are zero) */
  }
  int group = t >> 5;
  uint lane_bit = 1u << (uint(t) & 31u);
  for (int w = t; w < 2 * MASK_SET; w += BIN_THREADS) {
    s_masks[w] = 0u;
  }
  for (int w = t; w < MASK_SET; w += BIN_THREADS) {
    s_group_run[w] = 0u;
  }
  barrier();

  int width = imageSize(keys).x;
  int first_item = tile * BIN_TILE + group * GROUP_ITEMS + (t & 31);
  uint my_keys[BIN_ROUNDS];
  uint my_values[BIN_ROUNDS];
  uint my_ranks[BIN_ROUNDS]; /* among the group's items of the same digit */
  /* Every load first, so that one memory latency is paid a tile instead of one a round (each round
   * waits at its barriers). */
  for (int round = 0; round < BIN_ROUNDS; round++) {
    int i = first_item + 32 * round;
    bool real = i < items;
    ivec2 texel = particle_texel(i, width);
    my_keys[round] = real ? imageLoad(keys, texel).x : 0u;
    my_values[round] = real ? (index_values != 0 ? uint(i) : imageLoad(values, texel).x) : 0u;
  }
  uint set_last_round = NO_ITEM; /* the word this thread set in the last round (NO_ITEM: none) */
  for (int round = 0; round < BIN_ROUNDS; round++) {
    bool real = first_item + 32 * round < items;
    uint digit = bin_digit(my_keys[round]);
    uint run_word = uint(group * BIN_SLOTS) + digit;
    uint word = uint(round & 1) * uint(MASK_SET) + run_word;
    if (real) {
      atomicOr(s_masks[word], lane_bit);
    }
    barrier();
    uint rank = NO_ITEM;
    bool last_of_digit = false;
    if (real) {
      uint mine = s_masks[word];
      rank = s_group_run[run_word] + uint(bitCount(mine & (lane_bit - 1u)));
      last_of_digit = (mine & ~((lane_bit - 1u) | lane_bit)) == 0u;
    }
    if (set_last_round != NO_ITEM) {
      s_masks[set_last_round] = 0u; /* the other set: read last round, set again next round */
    }
    set_last_round = real ? word : NO_ITEM;
    my_ranks[round] = rank;
    barrier();
    if (last_of_digit) {
      s_group_run[run_word] = rank + 1u; /* read again after the next round's first barrier */
    }
  }
  barrier();

  /* Each digit's groups end to end: s_group_run becomes each group's first rank among the tile's items
   * of the digit, s_run the tile's count of it. */
  for (int d = t; d < BIN_SLOTS; d += BIN_THREADS) {
    uint sum = 0u;
    for (int g = 0; g < GROUPS; g++) {
      uint count_of_group = s_group_run[g * BIN_SLOTS + d];
      s_group_run[g * BIN_SLOTS + d] = sum;
      sum += count_of_group;
    }
    s_run[d] = sum;
  }
  barrier();
  /* The tile's digits end to end (s_start: where each digit starts in the tile), in three steps:
   * segment sums, their scan by one thread, each segment's digits. */
  if (t < SEGMENTS) {
    uint sum = 0u;
    for (int d = t * SEGMENT; d < min((t + 1) * SEGMENT, BIN_SLOTS); d++) {
      sum += s_run[d];
    }
    s_segments[t] = sum;
  }
  barrier();
  if (t == 0) {
    uint sum = 0u;
    for (int s = 0; s < SEGMENTS; s++) {
      uint segment_sum = s_segments[s];
      s_segments[s] = sum;
      sum += segment_sum;
    }
  }
  barrier();
  if (t < SEGMENTS) {
    uint start = s_segments[t];
    for (int d = t * SEGMENT; d < min((t + 1) * SEGMENT, BIN_SLOTS); d++) {
      s_start[d] = start;
      start += s_run[d];
    }
  }
  barrier();
  int offsets_width = imageSize(digit_offsets).x;
  for (int d = t; d < BIN_SLOTS; d += BIN_THREADS) {
    uint global_first = imageLoad(digit_offsets, particle_texel(d * tiles + tile, offsets_width)).x;
    s_base[d] = global_first - s_start[d]; /* slot of tile position j of digit d: s_base[d] + j */
  }
  for (int round = 0; round < BIN_ROUNDS; round++) {
    if (my_ranks[round] != NO_ITEM) {
      uint digit = bin_digit(my_keys[round]);
      uint position = s_start[digit] + s_group_run[group * BIN_SLOTS + int(digit)] + my_ranks[round];
      s_keys(position) = my_keys[round];
      s_values(position) = my_values[round];
    }
  }
  barrier();

  int tile_items = min(BIN_TILE, items - tile * BIN_TILE);
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
