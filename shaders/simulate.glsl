/* One simulation step of dt seconds for every particle slot: birth, respawn,
 * forces (gravity, drag, turbulence, scene force fields), explicit Euler
 * integration and collisions.
 *
 * A particle born inside the step is placed where the emitter was at its birth
 * instant and advanced only by the time it has lived since (Sylvan's thesis's
 * sub-frame emission correction), so continuous emitters do not band.
 *
 * Positions are stored relative to a per-step origin (loaded_origin when loaded,
 * stored_origin when stored): zero for the full-precision layout, the emitter's
 * position for the compact half-precision one (see simulation.py).
 *
 * The named constants (emitter_shape, lifetime, drag, ...) and the tables
 * (SHAPE_*, FIELD_*, COLLIDER_*, STREAM_*, ...) are #defined by the host from
 * simulation.py and tables.py; the records (Triangle, ForceField, Collider and
 * their load_*) come from records.py. */

/* Area-weighted triangle pick: the first triangle whose cumulative area fraction exceeds u. */
int find_triangle(float u)
{
  int low = 0;
  int high = int(triangle_count) - 1;
  while (low < high) {
    int middle = (low + high) / 2;
    if (load_triangle(middle).cumulative_area > u) {
      high = middle;
    }
    else {
      low = middle + 1;
    }
  }
  return low;
}

/* Unit vector at most acos(cos_max) away from `axis` (unit), uniform over the cap. */
vec3 random_in_cone(vec3 axis, float cos_max, float u, float v)
{
  float cos_theta = 1.0 - u * (1.0 - cos_max);
  float sin_theta = sqrt(max(0.0, 1.0 - cos_theta * cos_theta));
  vec3 helper = abs(axis.z) < 0.9 ? vec3(0.0, 0.0, 1.0) : vec3(1.0, 0.0, 0.0);
  vec3 tangent = normalize(cross(helper, axis));
  vec3 bitangent = cross(axis, tangent);
  float phi = 6.28318530718 * v;
  return axis * cos_theta + (tangent * cos(phi) + bitangent * sin(phi)) * sin_theta;
}

/* Spawn state of a particle born `lived` seconds before the end of the step. */
void emit(int index, float lived, out vec3 position, out vec3 velocity, out float life)
{
  uint i = uint(index);
  uint step = uint(step_index);
  uint stream = uint(seed) * STREAM_PER_SEED;
  vec3 local = vec3(0.0);
  vec3 normal = random_direction(random_unit(i, step, stream + STREAM_NORMAL_U), random_unit(i, step, stream + STREAM_NORMAL_V));
  switch (int(emitter_shape)) {
  case SHAPE_SPHERE:
    local = normal * (emitter_extent * pow(random_unit(i, step, stream + STREAM_SHAPE_U), 1.0 / 3.0));
    break;
  case SHAPE_BOX:
    local = (vec3(random_unit(i, step, stream + STREAM_SHAPE_U), random_unit(i, step, stream + STREAM_SHAPE_V),
                  random_unit(i, step, stream + STREAM_SHAPE_W)) * 2.0 - 1.0) * emitter_extent;
    normal = length(local) > 0.0 ? normalize(local) : normal;
    break;
  case SHAPE_MESH: {
    Triangle t = load_triangle(find_triangle(random_unit(i, step, stream + STREAM_SHAPE_U)));
    float r = sqrt(random_unit(i, step, stream + STREAM_SHAPE_V));
    float s = random_unit(i, step, stream + STREAM_SHAPE_W);
    local = t.v0 * (1.0 - r) + t.v1 * (r * (1.0 - s)) + t.v2 * (r * s);
    normal = t.normal;
    break;
  }
  }
  vec3 start = (emitter_prev * vec4(local, 1.0)).xyz;
  vec3 end = (emitter_cur * vec4(local, 1.0)).xyz;
  float birth_fraction = 1.0 - lived / dt; /* 0: at the step's start, 1: at its end */
  position = start + (end - start) * birth_fraction;

  vec3 base = mat3(emitter_cur) * initial_velocity;
  float speed = length(base);
  if (cone_cos < 1.0 && speed > 0.0) {
    base = speed * random_in_cone(base / speed, cone_cos, random_unit(i, step, stream + STREAM_CONE_U),
                                  random_unit(i, step, stream + STREAM_CONE_V));
  }
  vec3 world_normal = mat3(emitter_cur) * normal;
  float normal_length = length(world_normal);
  world_normal = normal_length > 0.0 ? world_normal / normal_length : vec3(0.0);
  vec3 jitter = random_direction(random_unit(i, step, stream + STREAM_JITTER_U), random_unit(i, step, stream + STREAM_JITTER_V));
  velocity = base + world_normal * normal_speed +
             jitter * (velocity_random * random_unit(i, step, stream + STREAM_JITTER_SPEED)) +
             (end - start) * (inherit_velocity / dt);
  /* The lifetime decides the step a particle dies in: unfused, as in the reference. */
  precise float drawn_life = lifetime * (1.0 - lifetime_random * random_unit(i, step, stream + STREAM_LIFETIME));
  life = drawn_life;
}

/* The curl noise volume at `u` (in tiles), trilinear with wrap-around, by hand
 * so that every host and the numpy reference interpolate identically. */
vec3 sample_noise(vec3 u)
{
  int n = int(noise_size); /* the volume's size: a uniform, not a per-particle size query */
  precise vec3 x = u * float(n) - 0.5; /* floor(x) picks texels: unfused, as in the reference */
  vec3 cell = floor(x);
  vec3 w = x - cell;
  ivec3 i0 = ivec3(mod(cell, float(n)));
  ivec3 i1 = ivec3(mod(cell + 1.0, float(n)));
  vec3 c000 = texelFetch(noise, ivec3(i0.x, i0.y, i0.z), 0).xyz;
  vec3 c100 = texelFetch(noise, ivec3(i1.x, i0.y, i0.z), 0).xyz;
  vec3 c010 = texelFetch(noise, ivec3(i0.x, i1.y, i0.z), 0).xyz;
  vec3 c110 = texelFetch(noise, ivec3(i1.x, i1.y, i0.z), 0).xyz;
  vec3 c001 = texelFetch(noise, ivec3(i0.x, i0.y, i1.z), 0).xyz;
  vec3 c101 = texelFetch(noise, ivec3(i1.x, i0.y, i1.z), 0).xyz;
  vec3 c011 = texelFetch(noise, ivec3(i0.x, i1.y, i1.z), 0).xyz;
  vec3 c111 = texelFetch(noise, ivec3(i1.x, i1.y, i1.z), 0).xyz;
  vec3 c00 = c000 + (c100 - c000) * w.x;
  vec3 c10 = c010 + (c110 - c010) * w.x;
  vec3 c01 = c001 + (c101 - c001) * w.x;
  vec3 c11 = c011 + (c111 - c011) * w.x;
  vec3 c0 = c00 + (c10 - c00) * w.y;
  vec3 c1 = c01 + (c11 - c01) * w.y;
  return c0 + (c1 - c0) * w.z;
}

/* Acceleration of the scene's force fields at `position`. */
vec3 force_fields(vec3 position)
{
  vec3 total = vec3(0.0);
  for (int f = 0; f < field_count; f++) {
    ForceField field = load_force_field(f);
    vec3 offset = position - field.position;
    float dist = length(offset);
    if (field.max_distance > 0.0 && dist > field.max_distance) {
      continue;
    }
    float strength = field.strength * pow(max(dist, 1.0), -field.falloff_power);
    switch (int(field.kind)) {
    case FIELD_WIND:
      total += field.axis * strength;
      break;
    case FIELD_FORCE:
      total += dist > 0.0 ? offset * (strength / dist) : vec3(0.0);
      break;
    case FIELD_VORTEX: {
      vec3 around = cross(field.axis, offset);
      float radius = length(around);
      total += radius > 0.0 ? around * (strength / radius) : vec3(0.0);
      break;
    }
    case FIELD_TURBULENCE:
      total += sample_noise(vec3(div_rn(offset.x, field.size), div_rn(offset.y, field.size),
                                 div_rn(offset.z, field.size))) * strength;
      break;
    }
  }
  return total;
}

/* Pushes a particle that ended the step inside (or, for a plane, through) a
 * collider back onto its surface; relative to the surface's own velocity, the
 * particle's normal part is reflected and scaled by bounce, its tangential
 * part by 1 - friction.  The host interpolates each collider's pose for this
 * substep and hands the matrices over as uniform rows (effectors.collider_rows:
 * a Collider record each), so no particle repeats that uniform work. */
void collide(vec3 previous, inout vec3 position, inout vec3 velocity)
{
  for (int c = 0; c < collider_count; c++) {
    Collider collider = load_collider(c);
    vec3 half_size = collider.half_size;
    vec4 to_local[3] = collider.to_local;
    vec4 to_world[3] = collider.to_world;
    vec4 moving[3] = collider.surface_velocity;
    vec4 at = vec4(position, 1.0);
    vec3 p = vec3(dot(to_local[0], at), dot(to_local[1], at), dot(to_local[2], at));
    vec3 normal = vec3(0.0);
    switch (int(collider.kind)) {
    case COLLIDER_PLANE: {
      float before = dot(collider.start_z, vec4(previous, 1.0));
      if (p.z < 0.0 && before >= 0.0 && abs(p.x) <= half_size.x && abs(p.y) <= half_size.y) {
        p.z = 0.0;
        normal = vec3(0.0, 0.0, 1.0);
      }
      break;
    }
    case COLLIDER_SPHERE: {
      float dist = length(p);
      if (dist < half_size.x) {
        normal = dist > 0.0 ? p / dist : vec3(0.0, 0.0, 1.0);
        p = normal * half_size.x;
      }
      break;
    }
    case COLLIDER_BOX: {
      vec3 depth = half_size - abs(p);
      if (all(greaterThan(depth, vec3(0.0)))) {
        int axis = depth.x <= depth.y && depth.x <= depth.z ? 0 : (depth.y <= depth.z ? 1 : 2);
        float side = p[axis] < 0.0 ? -1.0 : 1.0;
        p[axis] = side * half_size[axis];
        normal[axis] = side;
      }
      break;
    }
    }
    if (normal != vec3(0.0)) {
      vec4 surface = vec4(p, 1.0);
      position = vec3(dot(to_world[0], surface), dot(to_world[1], surface), dot(to_world[2], surface));
      vec3 surface_velocity = vec3(dot(moving[0], surface), dot(moving[1], surface), dot(moving[2], surface));
      vec3 relative = velocity - surface_velocity;
      vec3 v = vec3(dot(to_local[0].xyz, relative), dot(to_local[1].xyz, relative), dot(to_local[2].xyz, relative));
      float into = dot(v, normal);
      if (into < 0.0) {
        vec3 tangential = v - normal * into;
        v = tangential * (1.0 - collider.friction) - normal * (into * collider.bounce);
        velocity = vec3(dot(to_world[0].xyz, v), dot(to_world[1].xyz, v), dot(to_world[2].xyz, v)) +
                   surface_velocity;
      }
    }
  }
}

void main()
{
  /* Dispatched as (width / 256, rows): the invocation is the texel, and the
   * row width comes from the dispatch (no division, no image size query). */
  ivec2 texel = ivec2(gl_GlobalInvocationID.xy);
  int index = texel.y * int(gl_NumWorkGroups.x * gl_WorkGroupSize.x) + texel.x;
  if (index >= count) {
    return;
  }
  vec4 pos_age_in = imageLoad(pos_age, texel);
  vec4 vel_life_in = imageLoad(vel_life, texel);
  vec3 position = pos_age_in.xyz + loaded_origin;
  vec3 velocity = vel_life_in.xyz;
  float age = pos_age_in.w + dt;
  float life = vel_life_in.w;

  if (life > 0.0 && age >= life) {
    /* Expired `over` seconds ago.  A respawning slot waits (hidden, with a
     * negative age: Sylvan's sign-bit skip) for respawn_skip seconds plus
     * what is left of its slot period (which keeps a continuous emitter's
     * rate), or until the next burst of a repeating burst emitter. */
    float over = age - life;
    if ((flags & FLAG_RESPAWN) == 0) {
      life = -1.0; /* dead for good */
    }
    else {
      float wait = respawn_skip + max(slot_period - life, 0.0);
      if (burst_interval > 0.0) {
        /* The burst a slot waits for is an integer: computed unfused, as in the reference. */
        precise float death = time - over;
        precise float next_burst = ceil(div_rn(death, burst_interval)) * burst_interval;
        wait = next_burst - death;
      }
      age = over - wait;
      life = 0.0;
    }
  }
  if (age < 0.0 || life < 0.0) {
    imageStore(pos_age, texel, vec4(clamp(position - stored_origin, -STATE_LIMIT, STATE_LIMIT), age));
    imageStore(vel_life, texel, vec4(velocity, life));
    return;
  }

  float lived = dt;
  if (life == 0.0) {
    lived = min(age, dt);
    emit(index, lived, position, velocity, life);
    age = lived;
  }

  vec3 acceleration = gravity;
  if (turbulence_strength != 0.0) {
    precise vec3 noise_at = position * turbulence_frequency - noise_offset;
    acceleration += sample_noise(noise_at) * turbulence_strength;
  }
  if (field_count > 0) {
    acceleration += force_fields(position);
  }
  vec3 previous = position;
  position += velocity * lived;
  /* Drag as a damping factor that never reverses the velocity, so large
   * drag * dt stays stable (plain Euler would oscillate and blow up). */
  velocity += acceleration * lived - velocity * min(drag * lived, 1.0);
  if (collider_count > 0) {
    collide(previous, position, velocity);
  }

  imageStore(pos_age, texel, vec4(clamp(position - stored_origin, -STATE_LIMIT, STATE_LIMIT), age));
  imageStore(vel_life, texel, vec4(clamp(velocity, -STATE_LIMIT, STATE_LIMIT), life));
}
