/* The particle a splat-like kernel draws, read as every one of them reads it.
 *
 * Needs the state images pos_age and vel_life (load_particle: records.PARTICLE), the constants count,
 * state_origin and view_proj, and particle_alive (particle_alive.glsl). */

/* This invocation's slot, dispatched as (width / 256, rows) over the state images. */
int invocation_slot()
{
  return particle_index(imageSize(pos_age).x);
}

/* The particle of ``slot``: its index and state, its position in world
 * space.  False past the count and when not alive. */
bool read_particle(int slot, out int index, out Particle particle)
{
  if (slot >= count) {
    return false;
  }
  index = slot;
  particle = load_particle(particle_texel(index, imageSize(pos_age).x));
  particle.position += state_origin.xyz;
  return particle_alive(particle);
}

/* Inside the view volume: culled in clip space, before the divide. */
bool in_view(vec4 clip)
{
  return clip.w > 0.0 && all(lessThanEqual(abs(clip.xyz), vec3(clip.w)));
}

/* read_particle, and the particle's clip position (view_proj); false also
 * outside the view volume (in_view). */
bool read_visible_particle(int slot, out int index, out Particle particle, out vec4 clip)
{
  clip = vec4(0.0);
  if (!read_particle(slot, index, particle)) {
    return false;
  }
  clip = transform_point(view_proj, particle.position);
  return in_view(clip);
}
