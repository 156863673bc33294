/* Items per bin where bin_count's dense table cannot hold the bins
 * (binning.TABLE < bins < binning.HASHED_BINS): each workgroup counts BIN_TILE items into a
 * shared open-addressing table of HASH_SLOTS words, then adds one global
 * atomic per slot it filled.  A word is a key and its count: key + 1 in the
 * high bits, the count in the low count_bits = 31 - findMSB(bins).  A key
 * that finds neither itself nor an empty slot within HASH_PROBES probes adds
 * its own global atomic, so a table full of keys that never come back (many
 * bins, few items each) costs about what one atomic an item costs, while
 * keys that recur (clumps) mostly meet in shared memory.
 *
 * A count never carries into its key: the add that takes a count to
 * half_count (at least BIN_THREADS) takes half_count back out and adds it
 * globally, and an add that lands above half_count before that is undone by
 * its own thread, which then adds its item globally; so at most
 * BIN_THREADS - 1 adds sit above half_count at any time.
 *
 * Chosen by measurement: clumpy keys (90% in 1% of the bins) faster than an
 * atomic per item, uniform no slower; the table's own work (a read, then an
 * atomic that returns) is what remains (bench/results/h100-2026-11-25-hashed-
 * count-and-layout-prototypes.log, bench/README.md: Binning, sort and scan). */

uint first_slot(uint key)
{
  return (key * 2654435761u) >> (32u - HASH_BITS);
}

/* Counts `key` in the table; false when the table has no room for it. */
bool count_in_table(uint key, uint count_bits, uint half_count)
{
  uint count_mask = (1u << count_bits) - 1u;
  uint tag = (key + 1u) << count_bits;
  uint slot = first_slot(key);
  for (int probe = 0; probe < HASH_PROBES; probe++) {
    uint held = s_slots[slot];
    if (held == 0u) {
      held = atomicCompSwap(s_slots[slot], 0u, tag | 1u);
      if (held == 0u) {
        return true;
      }
    }
    if ((held & ~count_mask) == tag) {
      uint now = (atomicAdd(s_slots[slot], 1u) & count_mask) + 1u;
      if (now == half_count) {
        atomicAdd(s_slots[slot], 0u - half_count);
        add_global(key, half_count);
      }
      else if (now > half_count) {
        atomicAdd(s_slots[slot], 0xFFFFFFFFu);
        add_global(key, 1u);
      }
      return true;
    }
    slot = (slot + 1u) & (HASH_SLOTS - 1u);
  }
  return false;
}

void main()
{
  uint t = gl_LocalInvocationIndex;
  for (uint slot = t; slot < HASH_SLOTS; slot += uint(BIN_THREADS)) {
    s_slots[slot] = 0u;
  }
  barrier();
  uint count_bits = 31u - uint(findMSB(uint(bins)));
  uint half_count = 1u << (count_bits - 1u);
  int width = imageSize(keys).x;
  int first = bin_tile_index() * BIN_TILE;
  int end = min(first + BIN_TILE, count);
  for (int i = first + int(t); i < end; i += BIN_THREADS) {
    uint key = imageLoad(keys, particle_texel(i, width)).x;
    if (in_bins(key) && !count_in_table(key, count_bits, half_count)) {
      add_global(key, 1u);
    }
  }
  barrier();
  uint count_mask = (1u << count_bits) - 1u;
  for (uint slot = t; slot < HASH_SLOTS; slot += uint(BIN_THREADS)) {
    uint held = s_slots[slot];
    if ((held & count_mask) != 0u) {
      add_global((held >> count_bits) - 1u, held & count_mask);
    }
  }
}
