/* Look over lifetime from the look table (addon/engine/look/look.py): color and
 * size factor at t = age / lifetime, linear between texels; and a per-particle
 * random factor (1 - amount * u), keyed by the particle index and the seed;
 * a particle's look with its color by age or by speed (particle_look: needs
 * the constant color_per_speed, look.LOOK_RANDOM's z). */

vec4 look_at(float t)
{
  int last = imageSize(look).x - 1;
  precise float x = clamp(t, 0.0, 1.0) * float(last);
  int i = min(int(x), last - 1);
  float f = x - float(i);
  vec4 a = imageLoad(look, ivec2(i, 0));
  vec4 b = imageLoad(look, ivec2(i + 1, 0));
  /* precise: the numpy reference does not fuse multiply-adds; NVIDIA drivers would. */
  precise vec4 value = a + (b - a) * f;
  return value;
}

float variation(int index, float amount, uint stream)
{
  precise float value = 1.0 - amount * random_unit(uint(index), 0u, uint(look_seed) * STREAM_PER_SEED + stream);
  return value;
}

/* Where along the look table a particle's color is: at its life fraction ``t``, or (color_by SPEED: color_per_speed
 * = 1 / color_speed, 0 by age) at its speed over color_speed. */
float color_t(Particle particle, float t)
{
  precise float by_speed = length_rn(particle.velocity) * color_per_speed;
  return color_per_speed > 0.0 ? by_speed : t;
}

/* The look of a particle at its life fraction ``t``: the look table's size factor there, its color at color_t. */
vec4 particle_look(Particle particle, float t)
{
  vec4 look_now = look_at(t);
  if (color_per_speed > 0.0) {
    look_now.rgb = look_at(color_t(particle, t)).rgb;
  }
  return look_now;
}
