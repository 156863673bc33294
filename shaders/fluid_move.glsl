/* PBF's end of the iterations (fluids.py), a thread a slot: each live particle's velocity, its own plus the
 * solver's move over the step, to fluid_velocity (w 1; 0 for other slots), and its last iterate into the state. */

void main()
{
  int index;
  ivec2 texel;
  if (!particle_slot(imageSize(pos_age).x, count, index, texel)) {
    return;
  }
  Particle particle = load_particle(texel);
  if (!(particle.age >= 0.0 && particle.age < particle.life && is_finite(particle.position))) { /* the grid's test */
    imageStore(fluid_velocity, texel, vec4(0.0));
    return;
  }
  vec3 p = imageLoad(fluid_in, texel).xyz;
  imageStore(fluid_velocity, texel, vec4(particle.velocity + (p - particle.position) * fluid_inverse_dt, 1.0));
  particle.position = p;
  store_particle(texel, particle);
}
