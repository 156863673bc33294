/* PBF's vorticity (fluids.py), a thread a slot: omega = 1/rho0 sum (v_j - v_i) x grad_j W_spiky at the final
 * positions (the state, the grid built again there), the velocities fluid_move made; to fluid_omega.  The
 * step's one overflow count. */

void main()
{
  int index;
  ivec2 texel;
  if (!particle_slot(imageSize(pos_age).x, count, index, texel)) {
    return;
  }
  vec4 v = imageLoad(fluid_velocity, texel);
  if (v.w == 0.0) {
    return;
  }
  int width = imageSize(pos_age).x;
  vec3 p = load_particle(texel).position;
  vec3 omega = vec3(0.0);
  NeighbourWalk walk = neighbours_of(index, p);
  int j;
  vec3 q;
  while (next_neighbour(walk, j, q)) {
    vec3 d = p - q;
    omega += cross(imageLoad(fluid_velocity, particle_texel(j, width)).xyz - v.xyz, -fluid_spiky(d, length(d)));
  }
  count_overflow(walk);
  imageStore(fluid_omega, texel, vec4(omega * fluid_inverse_rest, 0.0));
}
