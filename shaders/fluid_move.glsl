/* PBF's end of the iterations (fluids.py), a thread a live entry of the grid: the last iterate (fluid_in, entry
 * order) into the entry's slot of the state, its velocity its own plus the solver's move over the step; the
 * velocity also into grid_velocity at the entry (what the velocity passes read of a neighbour). */

void main()
{
  int entry;
  ivec2 texel;
  vec4 own;
  if (!grid_live_entry(entry, texel, own)) {
    return;
  }
  ivec2 at = particle_texel(int(own.w), imageSize(pos_age).x);
  Particle particle = load_particle(at);
  vec3 p = imageLoad(fluid_in, texel).xyz;
  particle.velocity += (p - particle.position) * fluid_inverse_dt;
  particle.position = p;
  store_particle(at, particle);
  imageStore(grid_velocity, texel, vec4(particle.velocity, 0.0));
}
