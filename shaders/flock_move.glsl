/* The boids' end of a step (flocking.py), a thread a slot: each live bird's new velocity into the state and its
 * position moved by the difference over the step (flock_velocity's w: live). */

void main()
{
  int index;
  ivec2 texel;
  if (!particle_slot(imageSize(pos_age).x, count, index, texel)) {
    return;
  }
  vec4 steered = imageLoad(flock_velocity, texel);
  if (steered.w == 0.0) {
    return;
  }
  Particle bird = load_particle(texel);
  bird.position += (steered.xyz - bird.velocity) * flock_dt;
  bird.velocity = steered.xyz;
  store_particle(texel, bird);
}
