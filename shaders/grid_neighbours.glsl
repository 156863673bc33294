/* The neighbour grid's lists (neighbours.py), a thread a live entry (cell order): the entry's neighbours within
 * grid_radius, each once, in the fixed visiting order, at most MAX_NEIGHBOURS (a particle with more counts once
 * in grid_overflow), listed for the gathers (include/neighbours.glsl reads them): their number into grid_counts
 * and their entries into grid_neighbours, four to a texel, texel t of an entry at t x (the entries' capacity) +
 * the entry, so the threads of a workgroup read and write side by side.  The entries are floats, exact below
 * 2^24 (MAX_INTERACTING).
 *
 * The order: the nine rows of cells around the particle's own in (z, y) order from -1 to +1; a row's three cells
 * are three consecutive bins (grid_hash), x from -1 to +1; a bin an earlier row already had is skipped (so a bin
 * met twice yields each particle once); within a bin by slot.  Every particle within the radius is in one of the
 * 27 cells, so the distance test alone tells the neighbours apart.  Adjacent bins kept in a row are one range of
 * entries.  Nested loops with the listing inline: the same walk as a generator called from a gather loop took
 * twice as long on the H200 (bench/walk_variants.py). */

/* Squared distance, unfused in a fixed order (the reference's float32 sum). */
float grid_distance2(vec3 a, vec3 b)
{
  precise vec3 d = a - b;
  precise float d2 = d.x * d.x + d.y * d.y + d.z * d.z;
  return d2;
}

/* The bin of the first cell (x - 1 of the centre) of row `row`. */
uint grid_row_base(ivec3 centre, int row)
{
  return (grid_row_hash(centre.y + row % 3 - 1, centre.z + row / 3 - 1) + uint(centre.x - 1)) & uint(grid_table - 1);
}

/* Bits of row `row`'s three bins (from `base`) that no earlier row had. */
int grid_kept_bins(ivec3 centre, int row, uint base)
{
  uint mask = uint(grid_table - 1);
  int kept = 7;
  for (int earlier = 0; earlier < row; earlier++) {
    uint shift = base - grid_row_base(centre, earlier);
    for (int k = 0; k < 3; k++) {
      if (((shift + uint(k)) & mask) < 3u) {
        kept &= ~(1 << k);
      }
    }
  }
  return kept;
}

void main()
{
  int entry;
  ivec2 texel;
  vec4 own;
  if (!grid_live_entry(entry, texel, own)) {
    return;
  }
  int self = int(own.w);
  vec3 p = own.xyz;
  ivec3 centre = grid_cell(p);
  precise float radius2 = grid_radius * grid_radius;
  ivec2 size = imageSize(grid_sorted);
  int stride = size.x * size.y;
  int list_width = imageSize(grid_neighbours).x;
  uint mask = uint(grid_table - 1);
  vec4 words = vec4(0.0);
  int found = 0;
  bool overflowed = false;
  for (int row = 0; row < 9 && !overflowed; row++) {
    uint base = grid_row_base(centre, row);
    int kept = grid_kept_bins(centre, row, base);
    for (int column = 0; column < 3 && !overflowed;) {
      if ((kept & (1 << column)) == 0) {
        column++;
        continue;
      }
      uint first = (base + uint(column)) & mask;
      uint last = first;
      column++;
      while (column < 3 && (kept & (1 << column)) != 0 && ((base + uint(column)) & mask) == last + 1u) {
        last++;
        column++;
      }
      int end = grid_bin_start(int(last) + 1);
      for (int k = grid_bin_start(int(first)); k < end; k++) {
        vec4 candidate = imageLoad(grid_sorted, particle_texel(k, size.x));
        if (int(candidate.w) == self || !(grid_distance2(p, candidate.xyz) < radius2)) {
          continue;
        }
        if (found == MAX_NEIGHBOURS) {
          overflowed = true;
          break;
        }
        words[found & 3] = float(k);
        if ((found & 3) == 3) {
          imageStore(grid_neighbours, particle_texel((found >> 2) * stride + entry, list_width), words);
        }
        found++;
      }
    }
  }
  if ((found & 3) != 0) {
    imageStore(grid_neighbours, particle_texel((found >> 2) * stride + entry, list_width), words);
  }
  imageStore(grid_counts, texel, uvec4(uint(found)));
  if (overflowed) {
    imageAtomicAdd(grid_overflow, ivec2(0), 1u);
  }
}
