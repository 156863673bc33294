/* The neighbour grid's sort key of every slot (neighbours.py): its cell's hash bin while it is alive (the test
 * particle_alive.glsl), NO_CELL otherwise, so dead slots sort after every cell and are never met. */

void main()
{
  int index;
  ivec2 texel;
  if (!particle_slot(imageSize(pos_age).x, count, index, texel)) {
    return;
  }
  Particle particle = load_particle(texel);
  imageStore(grid_keys, texel, uvec4(particle_alive(particle) ? grid_hash(grid_cell(particle.position)) : 0xFFFFFFFFu));
}
