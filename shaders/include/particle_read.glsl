/* The particle a splat-like kernel draws, read as every one of them reads it.
 *
 * Needs the state images pos_age and vel_life, the constants count and
 * state_origin, particle_alive (particle_look.glsl), and with LIVE_INDEX the
 * compacted live list (live_count, live_index). */

/* This invocation's particle: its slot, world position with age, velocity
 * with life.  False past the count (or the live list) and when not alive. */
bool read_particle(out int index, out vec4 pos_age_in, out vec4 vel_life_in)
{
  int width = imageSize(pos_age).x;
  index = particle_index(width);
#ifdef LIVE_INDEX
  /* Over the compacted live slots only: their count stays on the GPU. */
  if (index >= min(int(imageLoad(live_count, ivec2(0)).x), count)) {
    return false;
  }
  index = int(imageLoad(live_index, particle_texel(index, imageSize(live_index).x)).x);
#else
  if (index >= count) {
    return false;
  }
#endif
  ivec2 texel = particle_texel(index, width);
  pos_age_in = imageLoad(pos_age, texel);
  pos_age_in.xyz += state_origin.xyz;
  vel_life_in = imageLoad(vel_life, texel);
  return particle_alive(pos_age_in, vel_life_in.w);
}

/* Inside the view volume: culled in clip space, before the divide. */
bool in_view(vec4 clip)
{
  return clip.w > 0.0 && all(lessThanEqual(abs(clip.xyz), vec3(clip.w)));
}
