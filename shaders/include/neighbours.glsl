/* The neighbour grid's lists (neighbours.py), as grid_neighbours.glsl made them when the grid was built: a live
 * entry's neighbours within grid_radius, each once, in the fixed visiting order.
 *
 *   Neighbours list = neighbours_of(entry);
 *   for (int n = 0; n < list.count; n++) {
 *     int k = neighbour_entry(list, n);   ... gather from entry k (neighbour_position(k): its grid position) ...
 *   }
 *
 * A list is read four entries a texel, the threads of a workgroup side by side.  Needs grid_sorted,
 * grid_neighbours and grid_counts. */

struct Neighbours {
  int entry;
  int count;
  int stride;  /* the entries' capacity: texel t of an entry is t x stride + entry */
  int width;
  vec4 words;  /* the texel of the last neighbour read */
};

Neighbours neighbours_of(int entry)
{
  ivec2 size = imageSize(grid_sorted);
  int count = int(imageLoad(grid_counts, particle_texel(entry, size.x)).x);
  return Neighbours(entry, count, size.x * size.y, imageSize(grid_neighbours).x, vec4(0.0));
}

/* Neighbour n's entry, for n from 0 up in turn (below list.count). */
int neighbour_entry(inout Neighbours list, int n)
{
  if ((n & 3) == 0) {
    list.words = imageLoad(grid_neighbours, particle_texel((n >> 2) * list.stride + list.entry, list.width));
  }
  return int(list.words[n & 3]);
}

/* An entry's position where the grid was built. */
vec3 neighbour_position(int entry)
{
  return imageLoad(grid_sorted, particle_texel(entry, imageSize(grid_sorted).x)).xyz;
}
