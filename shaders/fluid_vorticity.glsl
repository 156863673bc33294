/* PBF's vorticity (fluids.py), a thread a live entry of the grid: omega = 1/rho0 sum (v_j - v_i) x grad_j
 * W_spiky at the final positions (the last iterate, fluid_in) with the velocities fluid_move made (grid_velocity),
 * over the neighbours the grid listed at the predicted positions; to fluid_flow, two texels an entry side by side:
 * the velocity with |omega| (what fluid_viscosity reads of a neighbour), then omega. */

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
  vec3 p = imageLoad(fluid_in, texel).xyz;
  vec3 omega = vec3(0.0);
  Neighbours list = neighbours_of(entry);
  for (int n = 0; n < list.count; n++) {
    ivec2 other = particle_texel(neighbour_entry(list, n), width);
    vec3 d = p - imageLoad(fluid_in, other).xyz;
    omega += cross(imageLoad(grid_velocity, other).xyz - v, -fluid_spiky(d, length(d)));
  }
  omega *= fluid_inverse_rest;
  imageStore(fluid_flow, fluid_flow_texel(texel, 0), vec4(v, length(omega)));
  imageStore(fluid_flow, fluid_flow_texel(texel, 1), vec4(omega, 0.0));
}
