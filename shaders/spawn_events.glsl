/* The births of one child effect from its parent's events this substep (events.py): each parent slot writes its
 * births to the child slots cursor + offset, cursor + offset + 1, ... (offset: the exclusive scan of
 * spawn_births, so slots go in parent slot order, the same every run), at most one substep's worth of
 * child slots; births past that, and births onto a child still alive, count in spawn_overflow.
 *
 * A birth starts where the event was (plus spawn_offset and a point of the child's emitter shape around it: a
 * point, a sphere or a box),
 * with the parent's velocity times spawn_velocity spread within the spawn cone, plus the child's own velocity,
 * its speed along the shape's normal and its random jitter.  The child's simulate (SPAWNED variant) then finds
 * it with life 0 and age `over` (how long before the step's end the event was), draws its lifetime and moves it
 * that long.  Randomness is keyed by the child slot and step, from the child's seed, like emit()'s. */

void spawn(uint slot, vec3 at, vec3 parent_velocity, out vec3 position, out vec3 velocity)
{
  uint step = uint(step_index);
  uint stream = uint(seed) * STREAM_PER_SEED;
  vec3 normal = random_direction(random_unit(slot, step, stream + STREAM_NORMAL_U),
                                 random_unit(slot, step, stream + STREAM_NORMAL_V));
  vec3 local = vec3(0.0);
  if (int(emitter_shape) == SHAPE_SPHERE) {
    local = normal * (emitter_extent * pow(random_unit(slot, step, stream + STREAM_SHAPE_U), 1.0 / 3.0));
  }
  else if (int(emitter_shape) == SHAPE_BOX) { /* as emit()'s box: the normal points out from the event */
    local = (vec3(random_unit(slot, step, stream + STREAM_SHAPE_U), random_unit(slot, step, stream + STREAM_SHAPE_V),
                  random_unit(slot, step, stream + STREAM_SHAPE_W)) * 2.0 - 1.0) * emitter_extent;
    normal = length(local) > 0.0 ? normalize(local) : normal;
  }
  position = at + spawn_offset + local;
  vec3 inherited = parent_velocity * spawn_velocity;
  float speed = length(inherited);
  if (spawn_cone_cos < 1.0 && speed > 0.0) {
    inherited = speed * random_in_cone(inherited / speed, spawn_cone_cos, random_unit(slot, step, stream + STREAM_CONE_U),
                                       random_unit(slot, step, stream + STREAM_CONE_V));
  }
  vec3 jitter = random_direction(random_unit(slot, step, stream + STREAM_JITTER_U),
                                 random_unit(slot, step, stream + STREAM_JITTER_V));
  velocity = inherited + initial_velocity + normal * normal_speed +
             jitter * (velocity_random * random_unit(slot, step, stream + STREAM_JITTER_SPEED));
}

void main()
{
  ivec2 texel;
  uint births;
  if (!parent_births(texel, births)) {
    return;
  }
  uint first = imageLoad(spawn_offsets, texel).x;
  uint cursor = imageLoad(spawn_cursor, ivec2(0)).x;
  vec4 at = imageLoad(event_position, texel);
  vec3 parent_velocity = imageLoad(event_velocity, texel).xyz;
  float over = int(spawn_on) == SPAWN_ON_DEATH ? min(at.w, dt) : 0.0;
  int width = imageSize(child_pos_age).x;
  uint lost = 0u;
  for (uint j = 0u; j < births; j++) {
    uint rank = first + j;
    if (rank >= uint(count)) {
      lost += births - j;
      break;
    }
    uint slot = (cursor + rank) % uint(count);
    ivec2 child = particle_texel(int(slot), width);
    if (imageLoad(child_vel_life, child).w >= 0.0) {
      lost++; /* still alive: overwritten */
    }
    vec3 position, velocity;
    spawn(slot, at.xyz, parent_velocity, position, velocity);
    imageStore(child_pos_age, child, vec4(clamp(position - child_origin, -STATE_LIMIT, STATE_LIMIT), over - dt));
    imageStore(child_vel_life, child, vec4(clamp(velocity, -STATE_LIMIT, STATE_LIMIT), 0.0));
  }
  if (lost > 0u) {
    imageAtomicAdd(spawn_overflow, ivec2(0), lost);
  }
}
