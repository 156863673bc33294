/* Trail points as the drawing kernels read them (trails.py; samplers
 * trail_points and trail_heads, the constant trail_length, trail.glsl). */

/* World position of trail point ``j`` of particle ``index``: 0 is the particle
 * itself (at ``head``), j >= 1 the ring's (j - 1)th newest point. */
vec3 trail_point(int index, int j, vec3 head, int newest, ivec2 state_size)
{
  if (j == 0) {
    return head;
  }
  int ring = int(trail_length);
  int point = (newest - (j - 1) + ring) % ring;
  return texelFetch(trail_points, trail_texel(index, point, state_size), 0).xyz;
}

/* The tint of the trail at t (0: head, 1: tail): towards trail_color_end, faded by trail_fade. */
vec3 trail_tint_at(float t)
{
  return mix(vec3(1.0), trail_color_end, t) * (1.0 - trail_fade * t);
}
