/* Shared by the binning kernels (binning.py): a workgroup of BIN_THREADS
 * threads owns a tile of BIN_TILE consecutive items, read in BIN_ROUNDS
 * coalesced rounds (item round * BIN_THREADS + thread of the tile).
 *
 * Needs the constants count (items), bins (keys >= bins are "no bin"; -1:
 * every key but 0xFFFFFFFF is a bin) and, for the digit passes, shift; with
 * BIN_LIMIT the image item_limit (below). */

const int BIN_ROUNDS = BIN_TILE / BIN_THREADS;
const uint NO_ITEM = 0xFFFFFFFFu;

int bin_tile_index()
{
  return int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
}

/* Tiles of `count` items: the layout of the digit counts, whatever bin_items() is. */
int bin_tiles()
{
  return (count + BIN_TILE - 1) / BIN_TILE;
}

/* The items binned: `count`, or with BIN_LIMIT the first item_limit of them when fewer (a total the
 * GPU wrote, so lists of a kept capacity bin what they hold without a read-back). */
int bin_items()
{
#ifdef BIN_LIMIT
  return min(count, int(imageLoad(item_limit, ivec2(0, 0)).x));
#else
  return count;
#endif
}

/* Item `round` of this thread in this workgroup's tile. */
int bin_item(int round)
{
  return bin_tile_index() * BIN_TILE + round * BIN_THREADS + int(gl_LocalInvocationIndex);
}

bool in_bins(uint key)
{
  return key < uint(bins);
}

#ifdef BIN_DIGITS
const uint OUT_OF_BINS = uint(BIN_DIGITS); /* the digit slot after the last: kept last */

/* The digit this pass sorts by; keys outside the bins get OUT_OF_BINS in every pass. */
uint bin_digit(uint key)
{
  return in_bins(key) ? (key >> uint(shift)) & uint(BIN_DIGITS - 1) : OUT_OF_BINS;
}
#endif
