/* One simulation step of dt seconds for every particle slot: birth, respawn,
 * gravity and drag, explicit Euler integration.
 *
 * A particle born inside the step is placed where the emitter was at its birth
 * instant and advanced only by the time it has lived since (the thesis's
 * sub-frame emission correction), so continuous emitters do not band. */

const int FLAG_RESPAWN = 1;
const float SHAPE_SPHERE = 1.0;

/* Spawn state of a particle born `lived` seconds before the end of the step. */
void emit(int index, float lived, out vec3 position, out vec3 velocity, out float life)
{
  uint i = uint(index);
  uint step = uint(step_index);
  uint stream = uint(seed) * 8u;
  vec3 local = vec3(0.0);
  if (emit_shape.x == SHAPE_SPHERE) {
    vec3 direction = random_direction(random_unit(i, step, stream), random_unit(i, step, stream + 1u));
    local = direction * (emit_shape.y * pow(random_unit(i, step, stream + 2u), 1.0 / 3.0));
  }
  vec3 start = (emitter_prev * vec4(local, 1.0)).xyz;
  vec3 end = (emitter_cur * vec4(local, 1.0)).xyz;
  float birth_fraction = 1.0 - lived / dt; /* 0: at the step's start, 1: at its end */
  position = start + (end - start) * birth_fraction;

  vec3 jitter = random_direction(random_unit(i, step, stream + 3u), random_unit(i, step, stream + 4u));
  velocity = mat3(emitter_cur) * emit_velocity.xyz +
             jitter * (emit_velocity.w * random_unit(i, step, stream + 5u)) +
             (end - start) * (emit_shape.z / dt);
  life = lifetime_range.x * (1.0 - lifetime_range.y * random_unit(i, step, stream + 6u));
}

void main()
{
  int width = imageSize(pos_age).x;
  int index = particle_index(width);
  if (index >= count) {
    return;
  }
  ivec2 texel = particle_texel(index, width);
  vec4 pos_age_in = imageLoad(pos_age, texel);
  vec4 vel_life_in = imageLoad(vel_life, texel);
  vec3 position = pos_age_in.xyz;
  vec3 velocity = vel_life_in.xyz;
  float age = pos_age_in.w + dt;
  float life = vel_life_in.w;

  bool born = age >= 0.0 && life == 0.0;
  bool expired = life > 0.0 && age >= life;
  if (expired && (flags & FLAG_RESPAWN) == 0) {
    life = -1.0; /* dead for good */
  }
  if (age < 0.0 || life < 0.0) {
    imageStore(pos_age, texel, vec4(position, age));
    imageStore(vel_life, texel, vec4(velocity, life));
    return;
  }

  float lived = dt;
  if (born || expired) {
    lived = min(born ? age : age - life, dt);
    emit(index, lived, position, velocity, life);
    age = lived;
  }

  vec3 acceleration = gravity_drag.xyz - gravity_drag.w * velocity;
  position += velocity * lived;
  velocity += acceleration * lived;

  imageStore(pos_age, texel, vec4(position, age));
  imageStore(vel_life, texel, vec4(velocity, life));
}
