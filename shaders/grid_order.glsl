/* The neighbour grid's entries in cell order (neighbours.py; Green 2010): a thread an entry of the sort copies
 * its slot's position (and the slot, exact as a float below 2^24) to grid_sorted and, with GRID_ORDER_VELOCITY,
 * its velocity to grid_velocity, so a gather reads its neighbours contiguously.  Every entry, the dead slots'
 * last. */

void main()
{
  int entry;
  ivec2 texel;
  if (!particle_slot(imageSize(grid_sorted).x, count, entry, texel)) {
    return;
  }
  int slot = int(imageLoad(grid_items, particle_texel(entry, imageSize(grid_items).x)).x);
  Particle particle = load_particle(particle_texel(slot, imageSize(pos_age).x));
  imageStore(grid_sorted, texel, vec4(particle.position, float(slot)));
#ifdef GRID_ORDER_VELOCITY
  imageStore(grid_velocity, texel, vec4(particle.velocity, 0.0));
#endif
}
