/* The particle a rasterized (or sampler-reading) kernel draws, fetched as
 * every one of them fetches it: the sampler-side twin of particle_read.glsl.
 *
 * Needs the state samplers pos_age and vel_life (load_particle: records.PARTICLE), the constants count and
 * state_origin, and particle_alive (particle_alive.glsl). */

/* Particle ``index``'s state, its position in world space.  False past the
 * count and when not alive. */
bool fetch_particle(int index, out Particle particle)
{
  particle = load_particle(particle_texel(index, textureSize(pos_age, 0).x));
  particle.position += state_origin.xyz;
  return index < count && particle_alive(particle);
}
