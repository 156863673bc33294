/* The particle a splat-like kernel draws, read as every one of them reads it.
 *
 * Needs the state images pos_age and vel_life, the constants count,
 * state_origin and view_proj, and particle_alive (particle_look.glsl). */

/* This invocation's slot, dispatched as (width / 256, rows) over the state images. */
int invocation_slot()
{
  return particle_index(imageSize(pos_age).x);
}

/* The particle of ``slot``: its index, world position with age, velocity
 * with life.  False past the count and when not alive. */
bool read_particle(int slot, out int index, out vec4 pos_age_in, out vec4 vel_life_in)
{
  if (slot >= count) {
    return false;
  }
  index = slot;
  ivec2 texel = particle_texel(index, imageSize(pos_age).x);
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

/* read_particle, and the particle's clip position (view_proj); false also
 * outside the view volume (in_view). */
bool read_visible_particle(int slot, out int index, out vec4 pos_age_in, out vec4 vel_life_in, out vec4 clip)
{
  clip = vec4(0.0);
  if (!read_particle(slot, index, pos_age_in, vel_life_in)) {
    return false;
  }
  clip = transform_point(view_proj, pos_age_in.xyz);
  return in_view(clip);
}
