/* The particle a rasterized (or sampler-reading) kernel draws, fetched as
 * every one of them fetches it: the sampler-side twin of particle_read.glsl.
 *
 * Needs the state samplers pos_age and vel_life, the constants count and
 * state_origin, and particle_alive (particle_look.glsl). */

/* Particle ``index``: its world position with age, velocity with life.
 * False past the count and when not alive. */
bool fetch_particle(int index, out vec4 pos_age_in, out vec4 vel_life_in)
{
  ivec2 texel = particle_texel(index, textureSize(pos_age, 0).x);
  pos_age_in = texelFetch(pos_age, texel, 0);
  pos_age_in.xyz += state_origin.xyz;
  vel_life_in = texelFetch(vel_life, texel, 0);
  return index < count && particle_alive(pos_age_in, vel_life_in.w);
}
