/* The neighbour grid's gather (neighbours.py): a particle's neighbours within grid_radius, each once, in a fixed
 * order: the 27 cells around its own in (z, y, x) order from -1 to +1, within a cell by slot.  At most
 * MAX_NEIGHBOURS are visited; a particle with more is counted once in grid_overflow (count_overflow).
 *
 *   NeighbourWalk walk = neighbours_of(slot, position);
 *   int j; vec3 q;
 *   while (next_neighbour(walk, j, q)) { ... }
 *   count_overflow(walk);
 *
 * Needs pos_age (positions as the grid was built from), grid_items / grid_offsets (the slots in cell order and
 * where each hash bin starts: a bin ends where the next starts) and the constants of grid_cell.glsl plus grid_radius.  Cells sharing a
 * hash bin are told apart by each candidate's own cell, so a bin met twice yields each particle once. */

struct NeighbourWalk {
  int self;
  vec3 position;
  ivec3 centre;
  ivec3 visiting; /* the cell whose bin is walked */
  int cell;       /* the next of the 27 cells to visit */
  int at;         /* the next entry of grid_items */
  int end;
  int found;
  bool overflowed;
};

NeighbourWalk neighbours_of(int self, vec3 position)
{
  return NeighbourWalk(self, position, grid_cell(position), ivec3(0), 0, 0, 0, 0, false);
}

/* Squared distance, unfused in a fixed order (the reference's float32 sum). */
float grid_distance2(vec3 a, vec3 b)
{
  precise vec3 d = a - b;
  precise float d2 = d.x * d.x + d.y * d.y + d.z * d.z;
  return d2;
}

/* The next neighbour's slot and position; false once the 27 cells are walked, or MAX_NEIGHBOURS were found and
 * another is within the radius (walk.overflowed). */
bool next_neighbour(inout NeighbourWalk walk, out int slot, out vec3 neighbour)
{
  int items_width = imageSize(grid_items).x;
  int state_width = imageSize(pos_age).x;
  precise float radius2 = grid_radius * grid_radius;
  slot = -1;
  neighbour = vec3(0.0);
  while (true) {
    while (walk.at < walk.end) {
      int j = int(imageLoad(grid_items, particle_texel(walk.at, items_width)).x);
      walk.at++;
      if (j == walk.self) {
        continue;
      }
      vec3 q = imageLoad(pos_age, particle_texel(j, state_width)).xyz;
      if (grid_cell(q) != walk.visiting || !(grid_distance2(walk.position, q) < radius2)) {
        continue;
      }
      if (walk.found == MAX_NEIGHBOURS) {
        walk.overflowed = true;
        walk.cell = 27;
        walk.end = walk.at;
        return false;
      }
      walk.found++;
      slot = j;
      neighbour = q;
      return true;
    }
    if (walk.cell == 27) {
      return false;
    }
    walk.visiting = walk.centre + ivec3(walk.cell % 3, (walk.cell / 3) % 3, walk.cell / 9) - 1;
    walk.cell++;
    int bin = int(grid_hash(walk.visiting));
    int offsets_width = imageSize(grid_offsets).x;
    walk.at = int(imageLoad(grid_offsets, particle_texel(bin, offsets_width)).x);
    walk.end = int(imageLoad(grid_offsets, particle_texel(bin + 1, offsets_width)).x);
  }
  return false;
}

void count_overflow(NeighbourWalk walk)
{
  if (walk.overflowed) {
    imageAtomicAdd(grid_overflow, ivec2(0), 1u);
  }
}
