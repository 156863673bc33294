/* PBF's position correction (fluids.py), a thread a slot: delta-p = 1/rho0 sum (lambda_i + lambda_j + s_corr)
 * grad W_spiky, the walls adding lambda_i times their gradient; the corrected iterate, moved out of the
 * colliders, to fluid_out (Jacobi: every thread reads the previous iterate).  Live slots: lambda's w. */

void main()
{
  int index;
  ivec2 texel;
  if (!particle_slot(imageSize(pos_age).x, count, index, texel)) {
    return;
  }
  vec4 own = imageLoad(fluid_lambda, texel);
  if (own.w == 0.0) {
    return;
  }
  int width = imageSize(fluid_in).x;
  vec3 p = imageLoad(fluid_in, texel).xyz;
  float lambda_i = own.x;
  vec3 wall_gradient;
  fluid_walls(p, wall_gradient);
  vec3 delta = wall_gradient * lambda_i;
  NeighbourWalk walk = neighbours_of(index, imageLoad(pos_age, texel).xyz);
  int j;
  vec3 q;
  while (next_neighbour(walk, j, q)) {
    ivec2 at = particle_texel(j, width);
    vec3 d = p - imageLoad(fluid_in, at).xyz;
    float r2 = dot(d, d);
    float ratio = fluid_poly6(r2) * fluid_scorr_inverse_w;
    float ratio2 = ratio * ratio;
    float scorr = -fluid_scorr * (ratio2 * ratio2);
    delta += fluid_spiky(d, sqrt(r2)) * (lambda_i + imageLoad(fluid_lambda, at).x + scorr);
  }
  imageStore(fluid_out, texel, vec4(fluid_project(p + delta * fluid_inverse_rest), 0.0));
}
