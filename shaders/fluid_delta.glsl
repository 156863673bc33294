/* PBF's position correction (fluids.py), a thread a live entry of the grid (cell order): delta-p = 1/rho0 sum
 * (lambda_i + lambda_j + s_corr) grad W_spiky, the walls adding lambda_i times their gradient; the corrected
 * iterate, moved out of the colliders, to fluid_out (entry order).  Reads fluid_lambda's output (iterate,
 * lambda): Jacobi, every thread the same. */

void main()
{
  int entry;
  ivec2 texel;
  vec4 own;
  if (!grid_live_entry(entry, texel, own)) {
    return;
  }
  int width = imageSize(fluid_in).x;
  vec4 iterate = imageLoad(fluid_in, texel);
  vec3 p = iterate.xyz;
  float lambda_i = iterate.w;
  vec3 wall_gradient;
  fluid_walls(p, wall_gradient);
  vec3 delta = wall_gradient * lambda_i;
  Neighbours list = neighbours_of(entry);
  for (int n = 0; n < list.count; n++) {
    vec4 other = imageLoad(fluid_in, particle_texel(neighbour_entry(list, n), width));
    vec3 d = p - other.xyz;
    float r2 = dot(d, d);
    float ratio = fluid_poly6(r2) * fluid_scorr_inverse_w;
    float ratio2 = ratio * ratio;
    float scorr = -fluid_scorr * (ratio2 * ratio2);
    delta += fluid_spiky(d, sqrt(r2)) * (lambda_i + other.w + scorr);
  }
  imageStore(fluid_out, texel, vec4(fluid_project(p + delta * fluid_inverse_rest), 0.0));
}
