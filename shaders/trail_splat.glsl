/* Trails of Add effects as anti-aliased ribbons added into the splat's
 * integer accumulation (compositing.py, trail_draw SPLAT): an invocation a
 * segment, ``index`` x trail_length + s, the same segments as trail_ribbons.glsl
 * (trail_fetch.glsl; with MOTION_BLUR the head is where the splat's streak
 * ends, at shutter close).  It visits the pixels of the segment's band and adds
 * color x coverage to those whose centers project inside the segment (along
 * in [0, 1): consecutive segments share no pixel) within its interpolated
 * half width plus 1/2 (coverage 1 - 0 over the last pixel), with the splat's
 * packed atomics and overflow count (accum_add_color).  Segments whose box exceeds
 * MAX_SEGMENT_PIXELS (a trail sweeping past the lens, trail_fetch.glsl) are left out. */

#ifdef DEPTH_TEST
bool hidden(ivec2 pixel, float depth)
{
  vec2 tile_range = texelFetch(coarse_depth, pixel / COARSE_TILE, 0).xy;
  return depth > tile_range.y || (depth > tile_range.x && depth > texelFetch(scene_depth, pixel, 0).r);
}
#endif

void main()
{
  TrailSegment segment;
  if (!fetch_segment(SEGMENT_ENTRY, segment)) {
    return;
  }
  int index = segment.index;
  vec4 pos_age_in = segment.pos_age, vel_life_in = segment.vel_life;
  vec4 near_end = segment.near_end, far_end = segment.far_end;
  vec3 a = window_coordinates(near_end, target_size);
  vec3 b = window_coordinates(far_end, target_size);
#ifdef MOTION_BLUR
  vec2 open_px, close_px; /* the head where the splat's streak ends */
  if (segment.s == 0 && shutter_path(pos_age_in.xyz, vel_life_in.xyz, vec2(target_size), open_px, close_px)) {
    a.xy = close_px;
  }
#endif
  vec2 d = b.xy - a.xy;
  float length2 = dot(d, d);
  if (!(length2 > 0.0)) {
    return;
  }
  vec4 look_now = look_at(pos_age_in.w / vel_life_in.w);
  float t_a = float(segment.s) / trail_length;
  float t_b = float(segment.s + 1) / trail_length;
  float half_a = particle_radius_px(index, look_now, pixel_scale, near_end.w) * trail_width *
                 mix(1.0, trail_width_end, t_a);
  float half_b = particle_radius_px(index, look_now, pixel_scale, far_end.w) * trail_width *
                 mix(1.0, trail_width_end, t_b);
  vec3 base = particle_color(index, look_now, 1.0);
  vec3 color_a = base * trail_tint_at(t_a) * min(half_a * 2.0, 1.0); /* thinner than a pixel: fainter */
  vec3 color_b = base * trail_tint_at(t_b) * min(half_b * 2.0, 1.0);
  half_a = max(half_a, 0.5);
  half_b = max(half_b, 0.5);
  float reach = max(half_a, half_b) + 0.5;
  ivec2 low = ivec2(clamp(floor(min(a.xy, b.xy) - reach), vec2(0.0), vec2(target_size)));
  ivec2 high = ivec2(clamp(ceil(max(a.xy, b.xy) + reach), vec2(-1.0), vec2(target_size - 1)));
  if (any(lessThan(high, low)) || (high.x - low.x + 1) * (high.y - low.y + 1) > MAX_SEGMENT_PIXELS) {
    return;
  }
  float inverse_length = inversesqrt(length2);
  /* Along the segment's longer screen axis, only the pixels of the band |across| <= reach in each line:
   * its box holds many more along a diagonal (the same pixels get the same adds either way). */
  bool rows_major = abs(d.y) > abs(d.x);
  ivec2 lines = rows_major ? ivec2(low.y, high.y) : ivec2(low.x, high.x);
  ivec2 spans = rows_major ? ivec2(low.x, high.x) : ivec2(low.y, high.y);
  vec2 a_major = rows_major ? a.yx : a.xy;
  vec2 d_major = rows_major ? d.yx : d.xy;
  float slope = d_major.y / d_major.x;
  float band = reach * sqrt(length2) / abs(d_major.x) + 1.0;
  uint overflows = 0u;
  for (int line = lines.x; line <= lines.y; line++) {
    float middle = a_major.y + (float(line) + 0.5 - a_major.x) * slope - 0.5;
    int first = max(spans.x, int(floor(middle - band)));
    int last = min(spans.y, int(ceil(middle + band)));
    for (int step = first; step <= last; step++) {
      int x = rows_major ? step : line;
      int y = rows_major ? line : step;
      vec2 offset = vec2(float(x), float(y)) + 0.5 - a.xy;
      float along = dot(offset, d) / length2;
      if (along < 0.0 || along >= 1.0) {
        continue;
      }
      float across = abs(offset.x * d.y - offset.y * d.x) * inverse_length;
      float coverage = clamp(mix(half_a, half_b, along) + 0.5 - across, 0.0, 1.0);
      if (coverage <= 0.0) {
        continue;
      }
      ivec2 pixel = ivec2(x, y);
#ifdef DEPTH_TEST
      if (hidden(pixel, mix(a.z, b.z, along))) {
        continue;
      }
#endif
      uvec3 q = quantize_color(mix(color_a, color_b, along) * coverage, quantize_scale);
      if (any(notEqual(q, uvec3(0u)))) {
        overflows += accum_add_color(pixel, q);
      }
    }
  }
  if (overflows != 0u) {
    imageAtomicAdd(stats, ivec2(STAT_OVERFLOW, 0), overflows);
  }
}
