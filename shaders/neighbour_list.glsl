/* Lab kernel (neighbours.py, tests and the grid benchmark), a thread an entry of the grid like the interaction
 * kernels: each live slot's neighbours in visiting order, list_columns words a slot, the count first, then up to
 * list_columns - 1 slots; a dead slot lists none. */

void main()
{
  int entry;
  ivec2 texel;
  if (!particle_slot(imageSize(grid_sorted).x, count, entry, texel)) {
    return;
  }
  vec4 own = imageLoad(grid_sorted, texel);
  int slot = int(own.w);
  int width = imageSize(neighbour_list).x;
  int found = 0;
  if (entry < grid_live_entries()) {
    NeighbourWalk walk = neighbours_of(slot, own.xyz);
    int k;
    vec3 q;
    while (next_neighbour(walk, k, q)) {
      found++;
      if (found < list_columns) {
        imageStore(neighbour_list, particle_texel(slot * list_columns + found, width), uvec4(uint(walk.slot)));
      }
    }
    count_overflow(walk);
  }
  imageStore(neighbour_list, particle_texel(slot * list_columns, width), uvec4(uint(found)));
}
