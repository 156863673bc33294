/* PBF's position correction (fluids.py), a thread a slot: delta-p = 1/rho0 sum (lambda_i + lambda_j + s_corr)
 * grad W_spiky, the walls adding lambda_i times their gradient; the corrected iterate, moved out of the
 * colliders, to fluid_out.  Reads fluid_lambda's output (iterate, lambda): Jacobi, every thread the same. */

void main()
{
  int index;
  ivec2 texel;
  if (!particle_slot(imageSize(pos_age).x, count, index, texel)) {
    return;
  }
  Particle particle = load_particle(texel);
  if (!(particle.age >= 0.0 && particle.age < particle.life && is_finite(particle.position))) { /* the grid's test */
    return;
  }
  int width = imageSize(fluid_in).x;
  vec4 own = imageLoad(fluid_in, texel);
  vec3 p = own.xyz;
  float lambda_i = own.w;
  vec3 wall_gradient;
  fluid_walls(p, wall_gradient);
  vec3 delta = wall_gradient * lambda_i;
  NeighbourWalk walk = neighbours_of(index, particle.position);
  int j;
  vec3 q;
  while (next_neighbour(walk, j, q)) {
    vec4 other = imageLoad(fluid_in, particle_texel(j, width));
    vec3 d = p - other.xyz;
    float r2 = dot(d, d);
    float ratio = fluid_poly6(r2) * fluid_scorr_inverse_w;
    float ratio2 = ratio * ratio;
    float scorr = -fluid_scorr * (ratio2 * ratio2);
    delta += fluid_spiky(d, sqrt(r2)) * (lambda_i + other.w + scorr);
  }
  imageStore(fluid_out, texel, vec4(fluid_project(p + delta * fluid_inverse_rest), 0.0));
}
