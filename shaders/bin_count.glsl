/* Items per bin without contention: each workgroup counts its items in a
 * shared table first, then adds one global atomic per (workgroup, non-empty
 * bin), so a bin that takes millions of items sees thousands of atomics.
 * Up to BIN_TABLE bins the table is the histogram itself; beyond, a hash
 * table with linear probing (an item that finds no slot within BIN_PROBES,
 * or none once the table is three quarters full, adds its own global
 * atomic).  BIN_NAIVE: one global atomic per item, the peer this replaces.  BIN_WAVE_MATCH (moderngl benchmark only; Blender 5.2
 * cannot enable subgroup extensions): lanes of a subgroup with equal keys
 * are matched and only the lowest adds their number.  Keys >= bins are not
 * counted. */

const uint EMPTY_SLOT = 0xFFFFFFFFu;

void add_global(uint bin, uint amount)
{
  imageAtomicAdd(counts, particle_texel(int(bin), imageSize(counts).x), amount);
}

#if !defined(BIN_NAIVE) && !defined(BIN_WAVE_MATCH)
bool direct_table()
{
  return uint(bins) <= uint(BIN_TABLE);
}

void count_in_table(uint bin)
{
  if (direct_table()) {
    uint slot = bin;
    atomicAdd(s_table_counts[slot], 1u); /* a plain index: NVIDIA's compiler rejects expressions here */
    return;
  }
  uint slot = (bin * 2654435761u) >> uint(32 - BIN_TABLE_BITS); /* Fibonacci hashing */
  for (int probe = 0; probe < BIN_PROBES; probe++) {
    uint seen = s_table_bins[slot];
    if (seen == EMPTY_SLOT) {
      /* A table three quarters full takes no new bins: with that many distinct bins per
       * workgroup there is little to aggregate, and long probe chains would cost more. */
      if (s_table_used[0] >= uint(BIN_TABLE * 3 / 4)) {
        break;
      }
      seen = atomicCompSwap(s_table_bins[slot], EMPTY_SLOT, bin);
      if (seen == EMPTY_SLOT) {
        atomicAdd(s_table_used[0], 1u);
        seen = bin;
      }
    }
    if (seen == bin) {
      atomicAdd(s_table_counts[slot], 1u);
      return;
    }
    slot = (slot + 1u) & uint(BIN_TABLE - 1);
  }
  add_global(bin, 1u);
}
#endif

void main()
{
  int t = int(gl_LocalInvocationIndex);
#if !defined(BIN_NAIVE) && !defined(BIN_WAVE_MATCH)
  for (int slot = t; slot < BIN_TABLE; slot += BIN_THREADS) {
    s_table_bins[slot] = EMPTY_SLOT;
    s_table_counts[slot] = 0u;
  }
  if (t == 0) {
    s_table_used[0] = 0u;
  }
  barrier();
#endif
  bool tile_in_range = bin_tile_index() < bin_tiles();
  int width = imageSize(keys).x;
  for (int round = 0; round < BIN_ROUNDS; round++) {
    int i = bin_item(round);
    uint key = tile_in_range && i < count ? imageLoad(keys, particle_texel(i, width)).x : NO_ITEM;
    bool counted = in_bins(key);
#if defined(BIN_NAIVE)
    if (counted) {
      add_global(key, 1u);
    }
#elif defined(BIN_WAVE_MATCH)
    uvec4 peers = subgroupPartitionNV(counted ? key : NO_ITEM); /* every lane takes part */
    if (counted && gl_SubgroupInvocationID == subgroupBallotFindLSB(peers)) {
      add_global(key, subgroupBallotBitCount(peers));
    }
#else
    if (counted) {
      count_in_table(key);
    }
#endif
  }
#if !defined(BIN_NAIVE) && !defined(BIN_WAVE_MATCH)
  barrier();
  for (int slot = t; slot < BIN_TABLE; slot += BIN_THREADS) {
    uint amount = s_table_counts[slot];
    if (amount != 0u) {
      add_global(direct_table() ? uint(slot) : s_table_bins[slot], amount);
    }
  }
#endif
}
