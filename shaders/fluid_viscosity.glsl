/* PBF's velocity (fluids.py), a thread a live entry of the grid: XSPH viscosity c/rho0 sum (v_j - v_i) W_ij plus
 * vorticity confinement dt eps h (N x omega), N the normalized gradient of |omega|, at the final positions (the
 * last iterate, fluid_in) over the neighbours the grid listed; into the entry's slot of the state (the gathers
 * read fluid_in and fluid_flow, so no thread reads what another writes). */

void main()
{
  int entry;
  ivec2 texel;
  vec4 own;
  if (!grid_live_entry(entry, texel, own)) {
    return;
  }
  int width = imageSize(fluid_in).x;
  vec4 flow = imageLoad(fluid_flow, fluid_flow_texel(texel, 0)); /* velocity, |omega| */
  vec3 v = flow.xyz;
  float strength = flow.w;
  vec3 p = imageLoad(fluid_in, texel).xyz;
  vec3 omega = imageLoad(fluid_flow, fluid_flow_texel(texel, 1)).xyz;
  vec3 blend = vec3(0.0);
  vec3 eta = vec3(0.0);
  Neighbours list = neighbours_of(entry);
  for (int n = 0; n < list.count; n++) {
    ivec2 at = particle_texel(neighbour_entry(list, n), width);
    vec4 other = imageLoad(fluid_flow, fluid_flow_texel(at, 0));
    vec3 d = p - imageLoad(fluid_in, at).xyz;
    float r2 = dot(d, d);
    blend += (other.xyz - v) * fluid_poly6(r2);
    eta += fluid_spiky(d, sqrt(r2)) * (other.w - strength);
  }
  float eta_length = length(eta);
  vec3 normal = eta_length > 0.0 ? eta / eta_length : vec3(0.0);
  vec3 confinement = cross(normal, omega) * (fluid_dt * fluid_vorticity * fluid_radius);
  ivec2 home = particle_texel(int(own.w), imageSize(pos_age).x);
  Particle particle = load_particle(home);
  particle.velocity = v + blend * (fluid_viscosity * fluid_inverse_rest) + confinement;
  store_particle(home, particle);
}
