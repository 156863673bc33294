/* Look over lifetime from the look table (addon/engine/look/look.py): color and
 * size factor at t = age / lifetime, linear between texels; and a per-particle
 * random factor (1 - amount * u), keyed by the particle index and the seed. */

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
