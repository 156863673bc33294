/* PBF's velocity (fluids.py), a thread a live entry of the grid: XSPH viscosity c/rho0 sum (v_j - v_i) W_ij plus
 * vorticity confinement dt eps h (N x omega), N the normalized gradient of |omega|; into the entry's slot of the
 * state (the gathers read the grid's copies and fluid_omega, so no thread reads what another writes). */

void main()
{
  int entry;
  ivec2 texel;
  vec4 own;
  if (!grid_live_entry(entry, texel, own)) {
    return;
  }
  int width = imageSize(fluid_flow).x;
  vec4 flow = imageLoad(fluid_flow, texel); /* velocity, |omega| */
  vec3 v = flow.xyz;
  float strength = flow.w;
  vec3 p = own.xyz;
  vec3 omega = imageLoad(fluid_omega, texel).xyz;
  vec3 blend = vec3(0.0);
  vec3 eta = vec3(0.0);
  Neighbours list = neighbours_of(entry);
  for (int n = 0; n < list.count; n++) {
    int k = neighbour_entry(list, n);
    vec4 other = imageLoad(fluid_flow, particle_texel(k, width));
    vec3 d = p - neighbour_position(k);
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
