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
 * their load_*) come from records.py.
 *
 * Sub-emitters (events.py) compile two variants: EVENTS (the effect has children) records each particle's
 * death or impact this step in event_position / event_velocity; SPAWNED (the effect is a child) takes its
 * births' state from spawn_events.glsl, which wrote it, and draws only their lifetimes. */

#ifndef GRAINS /* births happen in the simulate pass only */
#ifndef SPAWNED /* a spawned effect's births come from spawn_events.glsl, not from its emitter */
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
#else
/* A spawned birth's lifetime, drawn as emit() draws it; spawn_events.glsl wrote the rest of its state. */
float spawned_life(int index)
{
  precise float drawn_life = lifetime * (1.0 - lifetime_random * random_unit(uint(index), uint(step_index),
                                                                            uint(seed) * STREAM_PER_SEED + STREAM_LIFETIME));
  return drawn_life;
}
#endif
#endif

#ifdef EVENTS
/* This step's events of the invocation's particle, for its children's spawn_count and spawn_events. */
float died_over = -1.0; /* seconds before the step's end it died (-1: it did not) */
vec3 death_position = vec3(0.0);
vec3 death_velocity = vec3(0.0);
float impact = 0.0; /* fastest speed into a collider it bounced off (0: none) */

void died(float over, vec3 position, vec3 velocity)
{
  died_over = over;
  death_position = position;
  death_velocity = velocity;
}

/* Where and how fast the particle was at its death, else at the step's end (with its impact). */
void record_events(ivec2 texel, vec3 position, vec3 velocity)
{
  bool dead = died_over >= 0.0;
  imageStore(event_position, texel, vec4(dead ? death_position : position, died_over));
  imageStore(event_velocity, texel, vec4(dead ? death_velocity : velocity, dead ? 0.0 : impact));
}
#endif

#ifndef GRAINS /* forces act in the simulate pass only */
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
#endif

/* An SDF collider's contact along a particle's step in shape space, from `start` (where the particle was
 * relative to the collider when the step began) to `end`: sets `p` to where the particle stays and
 * `normal` to the surface's there, and says whether it touched.
 *
 * No tunnelling: the segment is sphere-traced (steps of the distance beyond the contact level, at least
 * sdf_step, SDF_TRACE_STEPS samples) for the first point closer than the contact level (the thickness,
 * or for a particle that starts within it, a little closer than it started, so that sliding along the
 * surface is no contact).  The particle stops there, keeps the rest of its step's motion along the surface
 * (not into it), and is put back at the contact distance along the gradient.  A trace that runs out of
 * samples counts as touching where it got to (safe: never through a wall).  A particle that starts inside
 * (d < 0: born there, or the collider moved onto it) is pushed out from where it ended; `began_inside`
 * says so, for the permeability test (collide), which would otherwise sample the start again.
 * An open surface (sdf_surface: the thin slab behind it, sdf.py) has the slide traced as well, in the variants
 * that may meet one (SDF_OPEN_SURFACES: simulation.py, _sdf_pass_kernels; the families' one-pass variants).
 *
 * The trace samples sdf_distance (one filtered fetch each); the normals and the push-out sample sdf_sample (the
 * exact trilinear and its gradient), at the hit and where the particle ends, if that may be within the contact
 * distance: so the push-out's decision and distance are sdf_sample's, whatever the filter's weights. */
/* sdf_contact's sphere trace from `start` along unit `direction` for `span`: how far it got, `touched`
 * where it first sampled closer than `level` (or ran out of samples before the end); `d` comes in as the
 * distance at `start` and goes out as the last sample. */
float sdf_trace(Collider collider, vec3 start, vec3 direction, float span, float level, vec3 atlas_scale,
                inout float d, out bool touched)
{
  float along = 0.0;
  touched = false;
  for (int k = 0; k < SDF_TRACE_STEPS && along < span && !touched; k++) {
    along = min(along + max(d - level, collider.sdf_step), span);
    d = sdf_distance(collider, start + direction * along, atlas_scale);
    touched = d < level;
  }
  touched = touched || along < span;
  return along;
}

bool sdf_contact(Collider collider, vec3 start, vec3 end, out vec3 p, out vec3 normal, out bool began_inside)
{
  vec3 atlas_scale = 1.0 / vec3(textureSize(sdf_atlas, 0));
  float contact = collider.thickness;
  float d = sdf_distance(collider, start, atlas_scale);
  began_inside = d < 0.0;
  bool touched = false;
  p = end;
  normal = vec3(0.0);
  vec3 delta = end - start;
  float span = length(delta);
  bool outside = d >= 0.0;
  if (outside && span > 0.0) {
    vec3 direction = delta / span;
    float along = sdf_trace(collider, start, direction, span, min(contact, d - collider.sdf_slack), atlas_scale, d,
                            touched);
    if (touched) {
      vec3 hit = start + direction * along;
      normal = sdf_normal_at(collider, hit);
      vec3 rest = end - hit;
      p = hit + (rest - normal * min(dot(rest, normal), 0.0));
#if defined(SDF_OPEN_SURFACES) || defined(EVENTS) || defined(SPAWNED) || defined(GRAINS) /* one pass: any collider */
      float slide = length(p - hit);
      if (collider.sdf_surface > 0.0 && slide > 0.0) {
        /* an open surface's slab is thin: a slide along the tangent plane could pass through where the
         * surface curves (a valley), so it is traced too, and ends where it comes closer than the hit */
        float at_hit = d;
        bool again;
        vec3 along_slide = (p - hit) / slide;
        float slid = sdf_trace(collider, hit, along_slide, slide, min(contact, at_hit - collider.sdf_slack),
                               atlas_scale, d, again);
        p = again ? hit + along_slide * slid : p;
      }
#endif
    }
  }
  /* else d is the end's already, filtered: it decides only whether the end needs the exact sample */
  if (touched || !outside || (d - contact) * collider.sdf_inverse_voxel < SDF_FILTER_VOXELS) {
    vec3 gradient;
    d = sdf_sample(collider, p, gradient);
    if (d < contact) {
      normal = sdf_normal(gradient);
      p += normal * (contact - d);
      touched = true;
    }
  }
  return touched;
}

/* Shape-space point of a collider where world point `previous` was relative to it when the step began,
 * `lived` seconds ago: the collider's surface velocity there carries it to the step's end pose. */
vec3 step_start_local(Collider collider, vec3 previous, float lived)
{
  vec4 to_local[3] = collider.to_local;
  vec4 moving[3] = collider.surface_velocity;
  vec4 at = vec4(previous, 1.0);
  vec4 local = vec4(dot(to_local[0], at), dot(to_local[1], at), dot(to_local[2], at), 1.0);
  at = vec4(previous + vec3(dot(moving[0], local), dot(moving[1], local), dot(moving[2], local)) * lived, 1.0);
  return vec3(dot(to_local[0], at), dot(to_local[1], at), dot(to_local[2], at));
}

/* The SDF broad phase: whether the step from world `previous` to `position` may meet SDF collider c's grid,
 * from a world box around it (effectors.sdf_reach says why a step whose spread box misses it cannot meet the
 * grid; an analytic collider's box is empty): a few compares with uniforms, where the exact test
 * (meets_sdf_grid) first moves the step into the collider's space. */
bool meets_sdf_reach(int c, vec3 previous, vec3 position)
{
  vec3 middle = 0.5 * (previous + position);
  vec3 spread = mat3(sdf_reach_spread) * abs(0.5 * (position - previous));
  return all(lessThanEqual(middle - spread, sdf_reach[c * SDF_REACH_ROWS + 1].xyz)) &&
         all(greaterThanEqual(middle + spread, sdf_reach[c * SDF_REACH_ROWS].xyz));
}

/* Whether a step from shape-space `start` to `end` comes within the contact distance of an SDF collider's
 * grid box (outside it the surface is farther than the box: no contact). */
bool meets_sdf_grid(Collider collider, vec3 start, vec3 end)
{
  vec3 margin = vec3(collider.thickness);
  return all(lessThanEqual(min(start, end) - margin, collider.sdf_high)) &&
         all(greaterThanEqual(max(start, end) + margin, collider.sdf_low));
}

#ifdef SDF_CONTACT_LIST
/* Whether the step from world `previous` to `position` meets any SDF collider's grid (collide's test), the
 * exact test only for the colliders whose broad phase box it meets. */
bool meets_any_sdf_grid(float lived, vec3 previous, vec3 position)
{
  vec4 at = vec4(position, 1.0);
  for (int c = 0; c < collider_count; c++) {
    if (!meets_sdf_reach(c, previous, position)) { /* an analytic collider's box is empty */
      continue;
    }
    Collider collider = load_collider(c);
    vec4 to_local[3] = collider.to_local;
    vec3 p = vec3(dot(to_local[0], at), dot(to_local[1], at), dot(to_local[2], at));
    if (meets_sdf_grid(collider, step_start_local(collider, previous, lived), p)) {
      return true;
    }
  }
  return false;
}
#endif

/* Whether a particle was inside an analytic collider when the step began (it got into a permeable one
 * earlier); an SDF collider's answer comes from sdf_contact's first sample. */
bool started_inside(Collider collider, vec3 start)
{
  switch (int(collider.kind)) {
  case COLLIDER_SPHERE:
    return length(start) < collider.half_size.x;
  case COLLIDER_BOX:
    return all(lessThan(abs(start), collider.half_size));
  }
  return false; /* a plane is solid only for particles that come from above */
}

/* Pushes a particle that ended the step inside (or, for a plane, through) a
 * collider, or within its thickness, back onto its surface + thickness; relative
 * to the surface's own velocity, the particle's normal part is reflected and
 * scaled by bounce, its tangential part by 1 - friction, and stickiness pulls it
 * toward the surface (Blender's collision_response).  A permeable collider lets
 * it through by the roll of a random stream; a killing one kills it: returns
 * true, the particle dies at the contact.  The host interpolates each collider's
 * pose for this substep and hands the matrices over as uniform rows
 * (effectors.collider_rows: a Collider record each), so no particle repeats that
 * uniform work. */
bool collide(int index, float lived, vec3 previous, inout vec3 position, inout vec3 velocity)
{
  for (int c = 0; c < collider_count; c++) {
    Collider collider = load_collider(c);
#ifdef SDF_CONTACT_LIST /* that pass leaves every step that meets an SDF grid to the contact pass */
    if (int(collider.kind) == COLLIDER_SDF) {
      continue;
    }
#endif
    vec3 half_size = collider.half_size;
    vec3 reach = half_size + collider.thickness;
    vec4 to_local[3] = collider.to_local;
    vec4 to_world[3] = collider.to_world;
    vec4 moving[3] = collider.surface_velocity;
    vec4 at = vec4(position, 1.0);
    vec3 p = vec3(dot(to_local[0], at), dot(to_local[1], at), dot(to_local[2], at));
    vec3 normal = vec3(0.0);
    bool sdf_began_inside = false;
    switch (int(collider.kind)) {
    case COLLIDER_PLANE: {
      float before = dot(collider.start_z, vec4(previous, 1.0));
      if (p.z < collider.thickness && before >= 0.0 && abs(p.x) <= half_size.x && abs(p.y) <= half_size.y) {
        p.z = collider.thickness;
        normal = vec3(0.0, 0.0, 1.0);
      }
      break;
    }
    case COLLIDER_SPHERE: {
      float dist = length(p);
      if (dist < reach.x) {
        normal = dist > 0.0 ? p / dist : vec3(0.0, 0.0, 1.0);
        p = normal * reach.x;
      }
      break;
    }
    case COLLIDER_BOX: {
      vec3 depth = reach - abs(p);
      if (all(greaterThan(depth, vec3(0.0)))) {
        int axis = depth.x <= depth.y && depth.x <= depth.z ? 0 : (depth.y <= depth.z ? 1 : 2);
        float side = p[axis] < 0.0 ? -1.0 : 1.0;
        p[axis] = side * reach[axis];
        normal[axis] = side;
      }
      break;
    }
    case COLLIDER_SDF: {
      if (!meets_sdf_reach(c, previous, position)) {
        break;
      }
      vec3 start = step_start_local(collider, previous, lived);
      if (meets_sdf_grid(collider, start, p)) {
        sdf_contact(collider, start, p, p, normal, sdf_began_inside);
      }
      break;
    }
    }
    if (normal != vec3(0.0) && collider.permeability > 0.0) {
      uint stream = uint(seed) * STREAM_PER_SEED + STREAM_PERMEABILITY;
      if (random_unit(uint(index * MAX_COLLIDERS + c), uint(step_index), stream) < collider.permeability ||
          (int(collider.kind) == COLLIDER_SDF
               ? sdf_began_inside
               : started_inside(collider, step_start_local(collider, previous, lived)))) {
        normal = vec3(0.0);
      }
    }
    if (normal != vec3(0.0)) {
      vec4 surface = vec4(p, 1.0);
      position = vec3(dot(to_world[0], surface), dot(to_world[1], surface), dot(to_world[2], surface));
      if (collider.kill > 0.0) {
        return true;
      }
      vec3 surface_velocity = vec3(dot(moving[0], surface), dot(moving[1], surface), dot(moving[2], surface));
      vec3 relative = velocity - surface_velocity;
      vec3 v = vec3(dot(to_local[0].xyz, relative), dot(to_local[1].xyz, relative), dot(to_local[2].xyz, relative));
      float into = dot(v, normal);
#ifdef EVENTS
      impact = max(impact, -into);
#endif
      bool changed = into < 0.0;
      if (changed) {
        /* Blender cancels the stickiness it added at the last contact before the bounce */
        float bounced = collider.stickiness > 0.0 ? min(into + collider.stickiness, 0.0) : into;
        vec3 tangential = v - normal * into;
        v = tangential * (1.0 - collider.friction) - normal * (bounced * collider.bounce);
      }
      if (collider.stickiness > 0.0) {
        v -= normal * collider.stickiness;
        changed = true;
      }
      if (changed) {
        velocity = vec3(dot(to_world[0].xyz, v), dot(to_world[1].xyz, v), dot(to_world[2].xyz, v)) +
                   surface_velocity;
      }
    }
  }
  return false;
}

/* A particle died `over` seconds before the end of the step, `lived_for` seconds after its birth.  A
 * respawning slot waits (hidden, with a negative age: Sylvan's sign-bit skip) for respawn_skip seconds
 * plus what is left of its slot period (which keeps a continuous emitter's rate), or until the next burst
 * of a repeating burst emitter; any other dies for good. */
void die(float lived_for, float over, inout float age, inout float life)
{
  if ((flags & FLAG_RESPAWN) == 0) {
    life = -1.0;
    return;
  }
  float wait = respawn_skip + max(slot_period - lived_for, 0.0);
  if (burst_interval > 0.0) {
    /* The burst a slot waits for is an integer: computed unfused, as in the reference. */
    precise float death = time - over;
    precise float next_burst = ceil(div_rn(death, burst_interval)) * burst_interval;
    wait = next_burst - death;
  }
  age = over - wait;
  life = 0.0;
}

#ifndef GRAINS /* the settle pass steps nothing: settle_particle below */
/* The step of the particle in slot `index` (state texel `texel`); false when the contact list pass
 * (SDF_CONTACT_LIST) leaves it, unwritten, to the contact pass (SDF_CONTACTS), which steps it from the
 * same loaded state. */
bool step_particle(ivec2 texel, int index)
{
  Particle particle = load_particle(texel);
  vec3 position = particle.position + loaded_origin;
  vec3 velocity = particle.velocity;
  float age = particle.age + dt;
  float life = particle.life;

  if (life > 0.0 && age >= life) {
#ifdef EVENTS
    died(age - life, position, velocity);
#endif
    die(life, age - life, age, life); /* expired `age - life` seconds ago */
  }
  if (age < 0.0 || life < 0.0) {
    store_particle(texel, Particle(clamp(position - stored_origin, -STATE_LIMIT, STATE_LIMIT), age, velocity, life));
#ifdef EVENTS
    record_events(texel, position, velocity);
#endif
    return true;
  }

  float lived = dt;
  if (life == 0.0) {
    lived = min(age, dt);
#ifdef SPAWNED
    life = spawned_life(index);
#else
    emit(index, lived, position, velocity, life);
#endif
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
#ifdef SDF_CONTACT_LIST
  if (collider_count > 0 && meets_any_sdf_grid(lived, previous, position)) {
    return false;
  }
#endif
  if (collider_count > 0 && collide(index, lived, previous, position, velocity)) {
#ifdef EVENTS
    died(0.0, position, velocity);
#endif
    die(age, 0.0, age, life); /* killed by a collider */
  }

  store_particle(texel, Particle(clamp(position - stored_origin, -STATE_LIMIT, STATE_LIMIT), age,
                                 clamp(velocity, -STATE_LIMIT, STATE_LIMIT), life));
#ifdef EVENTS
  record_events(texel, position, velocity);
#endif
  return true;
}
#endif

#ifdef GRAINS
/* Granular effects (granular.py), after the contact iterations moved each live grain from where this step's
 * simulate pass put it (the state) to grain_iterate: the grain takes the correction's velocity (position-based
 * dynamics: the change over the step), then the colliders have their say again from where it was, so no
 * grain is pushed into one (every kind, in one pass, as the event variants do). */
void settle_particle(ivec2 texel, int index)
{
  Particle particle = load_particle(texel);
  float age = particle.age;
  float life = particle.life;
  if (!(age >= 0.0 && age < life)) {
    return;
  }
  vec3 predicted = particle.position + stored_origin;
  /* grain_iterate: two texels a grain (granular_solve.glsl), its position, then the pre-stabilising part of its
   * move (old overlaps undone), which carries no velocity */
  vec3 position = imageLoad(grain_iterate, ivec2(2 * texel.x, texel.y)).xyz;
  vec3 shift = imageLoad(grain_iterate, ivec2(2 * texel.x + 1, texel.y)).xyz;
  vec3 velocity = particle.velocity + (position - shift - predicted) * (1.0 / dt);
#ifdef GRAIN_EVENTS /* what this step's simulate pass recorded: kept, an impact or a kill added */
  vec4 recorded = imageLoad(event_velocity, texel);
  impact = recorded.w;
#endif
  if (collider_count > 0 && collide(index, 0.0, predicted, position, velocity)) {
#ifdef EVENTS
    died(0.0, position, velocity);
#endif
    die(age, 0.0, age, life); /* killed by a collider */
  }
  store_particle(texel, Particle(clamp(position - stored_origin, -STATE_LIMIT, STATE_LIMIT), age,
                                 clamp(velocity, -STATE_LIMIT, STATE_LIMIT), life));
#ifdef GRAIN_EVENTS
  record_events(texel, position, velocity);
#endif
}
#endif

#ifdef SDF_CONTACT_LIST
/* Appends the slots this workgroup left to the contact pass to contact_slots: ranked in shared memory,
 * then one global atomic a workgroup (one a particle would queue on that one address).  The list's
 * order varies from run to run; the result does not (each particle steps on its own). */
void list_contacts(bool listed, int index)
{
  if (gl_LocalInvocationIndex == 0u) {
    s_listed[0] = 0u;
  }
  barrier();
  uint rank = listed ? atomicAdd(s_listed[0], 1u) : 0u;
  barrier();
  if (gl_LocalInvocationIndex == 0u && s_listed[0] > 0u) {
    s_list_first[0] = imageAtomicAdd(contact_count, ivec2(0), s_listed[0]);
  }
  barrier();
  if (listed) {
    int entry = int(s_list_first[0] + rank);
    imageStore(contact_slots, particle_texel(entry, imageSize(contact_slots).x), uvec4(uint(index)));
  }
}
#endif

/* Dispatched as (width / 256, rows): the invocation is the texel, and the row width comes from the
 * dispatch (no division, no image size query).
 *
 * With SDF colliders the step runs in two passes (simulation.py, ParticleSystem.step): SDF_CONTACT_LIST
 * steps every particle whose step meets no SDF grid (the broad phase, meets_sdf_reach, spares most of them
 * the exact test) and lists the others' slots; SDF_CONTACTS steps the listed ones (collide's sphere trace).
 * With no indirect dispatch it is dispatched at the state's width and at most SDF_CONTACT_THREADS threads
 * (simulation.py, contact_groups), each taking every so many entries, the threads past the list's length
 * idle.  In slot order a few particles in contact would otherwise hold up the 31 others of their warp for
 * the length of the sphere trace; listed, they fill whole warps. */
void main()
{
  int width = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
#ifdef SDF_CONTACTS
  int listed = min(int(imageLoad(contact_count, ivec2(0)).x), count); /* a slot is listed once at most */
  int threads = int(gl_NumWorkGroups.y) * width;
  for (int entry = int(gl_GlobalInvocationID.y) * width + int(gl_GlobalInvocationID.x); entry < listed;
       entry += threads) {
    int index = int(imageLoad(contact_slots, particle_texel(entry, imageSize(contact_slots).x)).x);
    step_particle(particle_texel(index, width), index);
  }
#elif defined(GRAINS)
  ivec2 texel = ivec2(gl_GlobalInvocationID.xy);
  int index = texel.y * width + texel.x;
  if (index < count) {
    settle_particle(texel, index);
  }
#else
  ivec2 texel = ivec2(gl_GlobalInvocationID.xy);
  int index = texel.y * width + texel.x;
#ifdef SDF_CONTACT_LIST
  list_contacts(index < count && !step_particle(texel, index), index);
#else
  if (index < count) {
    step_particle(texel, index);
  }
#endif
#endif
}
