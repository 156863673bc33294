/* PBF's vorticity (fluids.py), a thread a live entry of the grid built again at the final positions: omega =
 * 1/rho0 sum (v_j - v_i) x grad_j W_spiky, the velocities fluid_move made (grid_velocity); to fluid_omega in
 * entry order, and the velocity with |omega| to fluid_flow (what fluid_viscosity reads of a neighbour, one
 * texel). */

void main()
{
  int entry;
  ivec2 texel;
  vec4 own;
  if (!grid_live_entry(entry, texel, own)) {
    return;
  }
  int width = imageSize(grid_velocity).x;
  vec3 v = imageLoad(grid_velocity, texel).xyz;
  vec3 p = own.xyz;
  vec3 omega = vec3(0.0);
  Neighbours list = neighbours_of(entry);
  for (int n = 0; n < list.count; n++) {
    int k = neighbour_entry(list, n);
    vec3 d = p - neighbour_position(k);
    omega += cross(imageLoad(grid_velocity, particle_texel(k, width)).xyz - v, -fluid_spiky(d, length(d)));
  }
  omega *= fluid_inverse_rest;
  imageStore(fluid_omega, texel, vec4(omega, 0.0));
  imageStore(fluid_flow, texel, vec4(v, length(omega)));
}
