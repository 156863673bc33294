/* The neighbour grid's gather (neighbours.py): a particle's neighbours within grid_radius, each once, in a fixed
 * order, read from the entries in cell order (grid_sorted: position and slot, contiguous by bin).
 *
 *   NeighbourWalk walk = neighbours_of(slot, position);
 *   int k; vec3 q;
 *   while (next_neighbour(walk, k, q)) { ... gather from entry k (walk.slot: its slot) ... }
 *   count_overflow(walk);
 *
 * The order: the nine rows of cells around the particle's own in (z, y) order from -1 to +1; a row's three cells
 * are three consecutive bins (grid_hash), x from -1 to +1; a bin an earlier row already had is skipped (so a bin
 * met twice yields each particle once); within a bin by slot.  Every particle within the radius is in one of the
 * 27 cells, so the distance test alone tells the neighbours apart: no candidate's cell is recomputed.  Adjacent
 * bins kept in a row are one range of entries.  At most MAX_NEIGHBOURS are visited; a particle with more is
 * counted once in grid_overflow (count_overflow).
 *
 * Needs grid_sorted, grid_offsets (where each bin's entries start: a bin ends where the next starts) and the
 * constants of grid_cell.glsl plus grid_radius. */

struct NeighbourWalk {
  int self;       /* the walker's slot, left out */
  vec3 position;
  ivec3 centre;
  int row;        /* the next of the nine rows */
  uint base;      /* the bin of the current row's first cell */
  int kept;       /* bits of the current row's three bins that no earlier row had */
  int column;     /* the next of the row's three bins */
  int at;         /* the next entry */
  int end;
  int found;
  bool overflowed;
  int slot;       /* the slot of the neighbour next_neighbour returned */
};

NeighbourWalk neighbours_of(int self, vec3 position)
{
  return NeighbourWalk(self, position, grid_cell(position), 0, 0u, 0, 3, 0, 0, 0, false, -1);
}

/* Squared distance, unfused in a fixed order (the reference's float32 sum). */
float grid_distance2(vec3 a, vec3 b)
{
  precise vec3 d = a - b;
  precise float d2 = d.x * d.x + d.y * d.y + d.z * d.z;
  return d2;
}

/* The bin of row `row`'s first cell (x - 1 of the centre). */
uint grid_row_base(NeighbourWalk walk, int row)
{
  ivec3 c = walk.centre;
  return (grid_row_hash(c.y + row % 3 - 1, c.z + row / 3 - 1) + uint(c.x - 1)) & uint(grid_table - 1);
}

/* The next row: its first bin, and which of its three bins no earlier row had. */
void grid_next_row(inout NeighbourWalk walk)
{
  uint mask = uint(grid_table - 1);
  walk.base = grid_row_base(walk, walk.row);
  walk.kept = 7;
  for (int earlier = 0; earlier < walk.row; earlier++) {
    uint shift = walk.base - grid_row_base(walk, earlier);
    for (int k = 0; k < 3; k++) {
      if (((shift + uint(k)) & mask) < 3u) {
        walk.kept &= ~(1 << k);
      }
    }
  }
  walk.row++;
  walk.column = 0;
}

/* The next entry range: the current row's next run of kept, consecutive bins; false once the rows are done. */
bool grid_next_range(inout NeighbourWalk walk)
{
  uint mask = uint(grid_table - 1);
  while (true) {
    if (walk.column == 3) {
      if (walk.row == 9) {
        return false;
      }
      grid_next_row(walk);
    }
    if ((walk.kept & (1 << walk.column)) == 0) {
      walk.column++;
      continue;
    }
    uint first = (walk.base + uint(walk.column)) & mask;
    uint last = first;
    walk.column++;
    while (walk.column < 3 && (walk.kept & (1 << walk.column)) != 0 &&
           ((walk.base + uint(walk.column)) & mask) == last + 1u)
    {
      last++;
      walk.column++;
    }
    int offsets_width = imageSize(grid_offsets).x;
    walk.at = int(imageLoad(grid_offsets, particle_texel(int(first), offsets_width)).x);
    walk.end = int(imageLoad(grid_offsets, particle_texel(int(last) + 1, offsets_width)).x);
    return true;
  }
  return false;
}

/* The next neighbour's entry and position (walk.slot its slot); false once the rows are walked, or
 * MAX_NEIGHBOURS were found and another is within the radius (walk.overflowed). */
bool next_neighbour(inout NeighbourWalk walk, out int entry, out vec3 neighbour)
{
  int sorted_width = imageSize(grid_sorted).x;
  precise float radius2 = grid_radius * grid_radius;
  entry = -1;
  neighbour = vec3(0.0);
  while (true) {
    while (walk.at < walk.end) {
      int k = walk.at;
      vec4 candidate = imageLoad(grid_sorted, particle_texel(k, sorted_width));
      walk.at++;
      int j = int(candidate.w);
      if (j == walk.self || !(grid_distance2(walk.position, candidate.xyz) < radius2)) {
        continue;
      }
      if (walk.found == MAX_NEIGHBOURS) {
        walk.overflowed = true;
        walk.row = 9;
        walk.column = 3;
        walk.end = walk.at;
        return false;
      }
      walk.found++;
      walk.slot = j;
      entry = k;
      neighbour = candidate.xyz;
      return true;
    }
    if (!grid_next_range(walk)) {
      return false;
    }
  }
  return false;
}

void count_overflow(NeighbourWalk walk)
{
  if (walk.overflowed) {
    imageAtomicAdd(grid_overflow, ivec2(0), 1u);
  }
}
