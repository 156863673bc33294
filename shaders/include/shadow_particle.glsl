/* A particle as the shadow volume sees it: its world center and radius at
 * its age (particle_look.glsl's size over life), read from the state images.
 *
 * Needs the state images pos_age and vel_life, the look table and constants
 * (look.py), count and state_origin. */

bool shadow_particle(int slot, out vec3 center, out float radius)
{
  center = vec3(0.0);
  radius = 0.0;
  if (slot >= count) {
    return false;
  }
  ivec2 texel = particle_texel(slot, imageSize(pos_age).x);
  vec4 pos_age_in = imageLoad(pos_age, texel);
  float life = imageLoad(vel_life, texel).w;
  if (!particle_alive(pos_age_in, life)) {
    return false;
  }
  center = pos_age_in.xyz + state_origin.xyz;
  radius = particle_world_radius(slot, look_at(pos_age_in.w / life));
  return true;
}
