/* Lab kernel (neighbours.py, tests and the grid benchmark): each live slot's neighbours in visiting order:
 * list_columns words a slot, the count first, then up to list_columns - 1 slots; a dead slot lists none. */

void main()
{
  int index;
  ivec2 texel;
  if (!particle_slot(imageSize(pos_age).x, count, index, texel)) {
    return;
  }
  Particle particle = load_particle(texel);
  int width = imageSize(neighbour_list).x;
  int found = 0;
  if (particle_alive(particle)) {
    NeighbourWalk walk = neighbours_of(index, particle.position);
    int k;
    vec3 q;
    while (next_neighbour(walk, k, q)) {
      found++;
      if (found < list_columns) {
        imageStore(neighbour_list, particle_texel(index * list_columns + found, width), uvec4(uint(walk.slot)));
      }
    }
    count_overflow(walk);
  }
  imageStore(neighbour_list, particle_texel(index * list_columns, width), uvec4(uint(found)));
}
