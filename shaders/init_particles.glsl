/* Gives every particle slot its birth time: slot i is born birth_interval * i
 * seconds after the start (age starts negative), so a continuous emitter
 * fills the pool evenly; birth_interval 0 is a burst. */

void main()
{
  int index;
  ivec2 texel;
  if (!particle_slot(imageSize(pos_age).x, count, index, texel)) {
    return;
  }
  store_particle(texel, Particle(vec3(0.0), -birth_interval * float(index), vec3(0.0), 0.0));
}
