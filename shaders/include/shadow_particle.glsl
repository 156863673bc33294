/* A particle as the shadow volume sees it: its world center and radius at
 * its age (particle_look.glsl's size over life), read from the state images.
 *
 * Needs the state images pos_age and vel_life (load_particle: records.PARTICLE), the look table and constants
 * (look.py), count and state_origin. */

bool shadow_particle(int slot, out vec3 center, out float radius)
{
  center = vec3(0.0);
  radius = 0.0;
  if (slot >= count) {
    return false;
  }
  Particle particle = load_particle(particle_texel(slot, imageSize(pos_age).x));
  if (!particle_alive(particle)) {
    return false;
  }
  center = particle.position + state_origin.xyz;
  radius = particle_world_radius(slot, look_at(particle.age / particle.life));
  return true;
}
