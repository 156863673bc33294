/* Items per bin without contention: each workgroup counts its items in a
 * shared table first, then adds one global atomic per (workgroup, non-empty
 * bin), so a bin that takes millions of items sees thousands of atomics.
 * That takes a table of all the bins: from BIN_TABLE bins to 2^17
 * binning.count_kernel dispatches bin_count_hashed.glsl instead, and given
 * more bins than its table this kernel adds a global atomic per item.  BIN_NAIVE: one
 * global atomic per item at every bin count, the peer this replaces.
 * BIN_WAVE_MATCH (moderngl benchmark only; Blender 5.2 cannot enable
 * subgroup extensions): lanes of a subgroup with equal keys are matched and
 * only the lowest adds their number.  Keys >= bins are not counted. */

void main()
{
  int t = int(gl_LocalInvocationIndex);
#if !defined(BIN_NAIVE) && !defined(BIN_WAVE_MATCH)
  bool in_table = uint(bins) <= uint(BIN_TABLE); /* the same in every invocation: barriers stay uniform */
  if (in_table) {
    for (int slot = t; slot < BIN_TABLE; slot += BIN_THREADS) {
      s_table_counts[slot] = 0u;
    }
    barrier();
  }
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
    if (counted && in_table) {
      atomicAdd(s_table_counts[key], 1u);
    } else if (counted) {
      add_global(key, 1u);
    }
#endif
  }
#if !defined(BIN_NAIVE) && !defined(BIN_WAVE_MATCH)
  if (in_table) {
    barrier();
    for (int slot = t; slot < BIN_TABLE; slot += BIN_THREADS) {
      uint amount = s_table_counts[slot];
      if (amount != 0u) {
        add_global(uint(slot), amount);
      }
    }
  }
#endif
}
