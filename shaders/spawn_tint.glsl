/* The parent's color each birth of this substep inherits (events.py, spawn_inherit_color > 0): run after
 * spawn_events.glsl over the parent's slots, before the cursor moves, it visits the same child slots and writes
 * each its tint (particle_look.glsl): rgb the parent's color at the event, its look table at t = age / life
 * (a parent that died this step: t = 1, the end of its life; with the parent's color by speed,
 * parent_color_per_speed > 0: its speed over color_speed, as color_t), a the fraction spawn_inherit_color. */

void main()
{
  ivec2 texel;
  uint births;
  if (!parent_births(texel, births)) {
    return;
  }
  float t = 1.0;
  Particle particle = load_particle(texel);
  if (imageLoad(event_position, texel).w < 0.0) { /* alive: an impact or a rate mark */
    t = div_rn(particle.age, particle.life);
  }
  if (parent_color_per_speed > 0.0) {
    precise float by_speed = length_rn(particle.velocity) * parent_color_per_speed;
    t = by_speed;
  }
  /* look_at() of look.glsl over the parent's table, in its arithmetic */
  int last = textureSize(parent_look, 0).x - 1;
  precise float x = clamp(t, 0.0, 1.0) * float(last);
  int i = min(int(x), last - 1);
  float f = x - float(i);
  vec3 a = texelFetch(parent_look, ivec2(i, 0), 0).rgb;
  vec3 b = texelFetch(parent_look, ivec2(i + 1, 0), 0).rgb;
  precise vec3 color = a + (b - a) * f;
  uint first = imageLoad(spawn_offsets, texel).x;
  uint cursor = imageLoad(spawn_cursor, ivec2(0)).x;
  int width = imageSize(child_tint).x;
  for (uint rank = first; rank < min(first + births, uint(count)); rank++) {
    imageStore(child_tint, particle_texel(int((cursor + rank) % uint(count)), width), vec4(color, spawn_inherit_color));
  }
}
