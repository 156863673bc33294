/* Keep-flag of every particle slot: 1 while it is alive (particle_alive.glsl:
 * the test the splat makes), 0 otherwise.  Scanned by compaction.py. */

void main()
{
  int index;
  ivec2 texel;
  if (!particle_slot(imageSize(pos_age).x, count, index, texel)) {
    return;
  }
  Particle particle = load_particle(texel);
  bool live = particle_alive(particle);
  imageStore(keep, texel, uvec4(live ? 1u : 0u));
}
