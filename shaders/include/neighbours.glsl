/* The neighbour grid's gather (neighbours.py): a particle's neighbours within grid_radius, each once, in a fixed
 * order, read from the entries in cell order (grid_sorted: position and slot, contiguous by bin).
 *
 *   NeighbourWalk walk = neighbours_of(slot, position);
 *   int k; vec3 q;
 *   while (next_neighbour(walk, k, q)) { ... gather from entry k (walk.slot: its slot) ... }
 *   count_overflow(walk);
 *
 * Cells have edge grid_radius / grid_reach, so the neighbours lie in the (2 grid_reach + 1)^3 cells around the
 * particle's.  The walk takes their rows (z, then y, each from -grid_reach to +grid_reach), leaves out a row
 * whose cells are all beyond the radius and trims each row's x to the cells the radius reaches (conservatively:
 * a margin for rounding); a row's cells are consecutive bins (grid_hash), so it is one range of entries (two
 * where it wraps the table).  A candidate counts when it is within the radius and its cell is in the row walked
 * (a bin two cells share holds others, met in their own row; in the same row a shared bin is a table's width
 * away in x, beyond the radius).  So the order is fixed, by cell (z, y, x) and within a cell by slot, whatever
 * the trimming; every neighbour is met once.  At most MAX_NEIGHBOURS are visited; a particle with more is counted
 * once in grid_overflow (count_overflow).
 *
 * Needs grid_sorted, grid_offsets (where each bin's entries start: a bin ends where the next starts), the
 * constants of grid_cell.glsl plus grid_radius and grid_reach (neighbours.py). */

struct NeighbourWalk {
  int self;       /* the walker's slot, left out */
  vec3 position;
  vec3 scaled;    /* the position in cells (grid_cell's product) */
  ivec3 centre;
  float slack;    /* the rows' and x's margin for rounding, in cells */
  int reach;      /* cells the radius spans */
  int row;        /* the next row, 0 to (2 reach + 1)^2 */
  ivec2 visiting; /* the (y, z) of the row walked */
  uint next_bin;  /* the first bin of the row's second range (it wrapped the table), or of none */
  int next_end;   /* that range's bins */
  int at;         /* the next entry */
  int end;
  int found;
  bool overflowed;
  int slot;       /* the slot of the neighbour next_neighbour returned */
};

NeighbourWalk neighbours_of(int self, vec3 position)
{
  precise vec3 scaled = position * grid_inverse_cell;
  vec3 size = abs(scaled);
  float slack = (1.0 + max(size.x, max(size.y, size.z))) * (1.0 / 65536.0); /* some 2^7 roundings of s */
  return NeighbourWalk(self, position, scaled, grid_cell(position), slack, int(grid_reach), 0, ivec2(0), 0u, 0, 0, 0,
                       0, false, -1);
}

/* Squared distance, unfused in a fixed order (the reference's float32 sum). */
float grid_distance2(vec3 a, vec3 b)
{
  precise vec3 d = a - b;
  precise float d2 = d.x * d.x + d.y * d.y + d.z * d.z;
  return d2;
}

/* The entries of bins first to first + count - 1 (no wrap). */
void grid_bins(inout NeighbourWalk walk, uint first, int count)
{
  int offsets_width = imageSize(grid_offsets).x;
  walk.at = int(imageLoad(grid_offsets, particle_texel(int(first), offsets_width)).x);
  walk.end = int(imageLoad(grid_offsets, particle_texel(int(first) + count, offsets_width)).x);
}

/* The next entry range: the rest of a wrapped row, or the next row the radius reaches, its x trimmed; false once
 * the rows are done. */
bool grid_next_range(inout NeighbourWalk walk)
{
  if (walk.next_end > 0) {
    grid_bins(walk, walk.next_bin, walk.next_end);
    walk.next_end = 0;
    return true;
  }
  float reach = float(walk.reach) + walk.slack;
  int side = 2 * walk.reach + 1;
  while (walk.row < side * side) {
    ivec2 offset = ivec2(walk.row % side, walk.row / side) - walk.reach;
    walk.row++;
    walk.visiting = walk.centre.yz + offset;
    vec2 low = vec2(walk.visiting) - walk.scaled.yz;
    vec2 gap = max(max(low, -low - 1.0), 0.0); /* to the row's cells, across y and z, in cells */
    float room = reach * reach - dot(gap, gap);
    if (room < 0.0) {
      continue;
    }
    float extent = sqrt(room) + walk.slack;
    vec2 row_cells = vec2(walk.centre.x - walk.reach, walk.centre.x + walk.reach);
    int first = int(clamp(floor(walk.scaled.x - extent), row_cells.x, row_cells.y));
    int count = int(clamp(floor(walk.scaled.x + extent), row_cells.x, row_cells.y)) - first + 1;
    if (count <= 0) {
      continue;
    }
    uint mask = uint(grid_table - 1);
    uint bin = (grid_row_hash(walk.visiting.x, walk.visiting.y) + uint(first)) & mask;
    int before_wrap = min(count, int(mask - bin) + 1);
    walk.next_bin = 0u;
    walk.next_end = count - before_wrap;
    grid_bins(walk, bin, before_wrap);
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
      if (j == walk.self || !(grid_distance2(walk.position, candidate.xyz) < radius2) ||
          grid_cell(candidate.xyz).yz != walk.visiting)
      {
        continue;
      }
      if (walk.found == MAX_NEIGHBOURS) {
        walk.overflowed = true;
        walk.row = (2 * walk.reach + 1) * (2 * walk.reach + 1);
        walk.next_end = 0;
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
