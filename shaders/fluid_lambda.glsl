/* PBF's density constraint (fluids.py), a thread a live entry of the grid (cell order): each particle's density
 * at its iterate (fluid_in, in entry order; neighbours as the grid found them at the step's positions), the
 * colliders' walls included, and lambda = -C / (sum |grad C|^2 + relaxation); C = rho / rho0 - 1, times
 * fluid_cohesion where sparse.  Writes (iterate, lambda) to fluid_out, which fluid_delta reads. */

void main()
{
  int entry;
  ivec2 texel;
  vec4 own;
  if (!grid_live_entry(entry, texel, own)) {
    return;
  }
  int width = imageSize(fluid_in).x;
  vec3 p = imageLoad(fluid_in, texel).xyz;
  vec3 wall_gradient;
  float density = fluid_poly6(0.0) + fluid_walls(p, wall_gradient);
  vec3 gradient_i = wall_gradient * fluid_inverse_rest;
  float gradient_sum = 0.0;
  Neighbours list = neighbours_of(entry);
  for (int n = 0; n < list.count; n++) {
    vec3 d = p - imageLoad(fluid_in, particle_texel(neighbour_entry(list, n), width)).xyz;
    float r2 = dot(d, d);
    density += fluid_poly6(r2);
    vec3 g = fluid_spiky(d, sqrt(r2)) * fluid_inverse_rest;
    gradient_i += g;
    gradient_sum += dot(g, g);
  }
  float constraint = density * fluid_inverse_rest - 1.0;
  constraint = constraint > 0.0 ? constraint : constraint * fluid_cohesion;
  imageStore(fluid_out, texel, vec4(p, -constraint / (gradient_sum + dot(gradient_i, gradient_i) + fluid_relaxation)));
}
