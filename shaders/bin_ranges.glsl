/* Every bin's range of the binned items, from their sorted keys (binning.py,
 * after the digit passes): one thread per bin finds the first item whose key
 * is not below its bin, and the first not below the next bin, by binary
 * search.  Keys outside the bins sort after every binned item (in item
 * order, not by key), but all are >= bins, so "key < bin" still holds for a
 * prefix of the items and the search stays exact.  Writes counts and offsets
 * (what bin_count and the scan give) and, from the last bin, the total of
 * binned items; no atomics, no clear, bins * log2(items) reads. */

/* The number of the first `items` sorted keys below `bin`. */
int keys_below(uint bin, int items, int width)
{
  int low = 0;
  int high = items;
  while (low < high) {
    int middle = (low + high) >> 1;
    if (imageLoad(sorted_keys, particle_texel(middle, width)).x < bin) {
      low = middle + 1;
    }
    else {
      high = middle;
    }
  }
  return low;
}

void main()
{
  int bin = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * BIN_THREADS +
            int(gl_LocalInvocationIndex);
  if (bin >= bins) {
    return;
  }
  int width = imageSize(sorted_keys).x;
  int items = bin_items();
  int first = keys_below(uint(bin), items, width);
  int end = keys_below(uint(bin) + 1u, items, width);
  ivec2 texel = particle_texel(bin, imageSize(counts).x);
  imageStore(offsets, texel, uvec4(uint(first)));
  imageStore(counts, texel, uvec4(uint(end - first)));
  if (bin == bins - 1) {
    imageStore(total, ivec2(0, 0), uvec4(uint(end)));
  }
}
