/* How many particles each parent slot's events of this substep give birth to in one child effect: the scan's
 * input (events.py).  Death and collision events come from the parent's simulate (EVENTS variant: event_position,
 * event_velocity); a rate counts the 1 / spawn_rate marks the parent's age passed this step.  The count per event
 * is lowered by up to spawn_count_random, drawn per parent slot and step from the child's seed. */

void main()
{
  ivec2 texel = ivec2(gl_GlobalInvocationID.xy);
  int index = texel.y * int(gl_NumWorkGroups.x * gl_WorkGroupSize.x) + texel.x;
  if (index >= parent_count) {
    return;
  }
  uint events = 0u;
  switch (int(spawn_on)) {
  case SPAWN_ON_DEATH:
    events = imageLoad(event_position, texel).w >= 0.0 ? 1u : 0u;
    break;
  case SPAWN_ON_COLLISION:
    events = imageLoad(event_velocity, texel).w > impact_speed ? 1u : 0u;
    break;
  case SPAWN_ON_RATE: {
    Particle particle = load_particle(texel);
    float age = particle.age;
    if (particle.life > 0.0 && age >= 0.0) {
      /* marks are integers: computed unfused, as in the reference */
      precise float marks = floor(age * spawn_rate) - floor(max(age - dt, 0.0) * spawn_rate);
      events = uint(min(marks, float(MAX_RATE_EVENTS)));
    }
    break;
  }
  }
  uint births = 0u;
  if (events > 0u) {
    float u = random_unit(uint(index), uint(step_index), uint(seed) * STREAM_PER_SEED + STREAM_SPAWN_COUNT);
    precise float fewer = float(spawn_count) * spawn_count_random * u;
    births = events * (uint(spawn_count) - uint(fewer));
  }
  imageStore(spawn_births, texel, uvec4(births));
}
