/* PBF's velocity (fluids.py), a thread a slot: XSPH viscosity c/rho0 sum (v_j - v_i) W_ij plus vorticity
 * confinement dt eps h (N x omega), N the normalized gradient of |omega|; into the state. */

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
  Particle particle = load_particle(texel);
  vec3 p = particle.position;
  vec3 omega = imageLoad(fluid_omega, texel).xyz;
  float strength = length(omega);
  vec3 blend = vec3(0.0);
  vec3 eta = vec3(0.0);
  NeighbourWalk walk = neighbours_of(index, p);
  int j;
  vec3 q;
  while (next_neighbour(walk, j, q)) {
    ivec2 at = particle_texel(j, width);
    vec3 d = p - q;
    float r2 = dot(d, d);
    blend += (imageLoad(fluid_velocity, at).xyz - v.xyz) * fluid_poly6(r2);
    eta += fluid_spiky(d, sqrt(r2)) * (length(imageLoad(fluid_omega, at).xyz) - strength);
  }
  float eta_length = length(eta);
  vec3 normal = eta_length > 0.0 ? eta / eta_length : vec3(0.0);
  vec3 confinement = cross(normal, omega) * (fluid_dt * fluid_vorticity * fluid_radius);
  vec3 velocity = v.xyz + blend * (fluid_viscosity * fluid_inverse_rest) + confinement;
  particle.velocity = velocity;
  store_particle(texel, particle); /* its position the bits it had: the other threads' gathers read the same */
}
