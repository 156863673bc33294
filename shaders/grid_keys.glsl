/* The neighbour grid's sort key of every slot (neighbours.py): its cell's hash bin while it is alive (the test
 * keep_live.glsl makes), NO_CELL otherwise, so dead slots sort after every cell and are never met. */

void main()
{
  int index;
  ivec2 texel;
  if (!particle_slot(imageSize(pos_age).x, count, index, texel)) {
    return;
  }
  Particle particle = load_particle(texel);
  bool live = particle.age >= 0.0 && particle.age < particle.life && is_finite(particle.position);
  imageStore(grid_keys, texel, uvec4(live ? grid_hash(grid_cell(particle.position)) : 0xFFFFFFFFu));
}
