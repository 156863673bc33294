/* The particle depth over trails (particle_depth.py): an invocation a segment, index x trail_length + s, the
 * segments trail_accumulate.glsl draws.  A segment marks, with particle_depth.glsl's atomic min on the float bits,
 * every pixel whose center projects inside it (along in [0, 1]) within its interpolated half width plus 1/2:
 * the splat's and the ribbons' coverage, at least one pixel wide as the alpha streaks are.  The depth is the
 * view depth interpolated between the segment's ends, as a head marks its own.  Segments that add no light
 * (their particle's or their tint at both ends is black), and those whose box exceeds MAX_SEGMENT_PIXELS, mark
 * nothing (trail_footprint.glsl gives them no tiles). */

void main()
{
  TrailSegment segment;
  if (!fetch_segment(SEGMENT_ENTRY, segment)) {
    return;
  }
  int index = segment.index;
  vec4 look_now = particle_look(segment.particle, segment.particle.age / segment.particle.life);
  float t_a = float(segment.s) / trail_length;
  float t_b = float(segment.s + 1) / trail_length;
  vec3 tint = max(trail_tint_at(t_a), trail_tint_at(t_b));
  if (!particle_shows(index, look_now) || !(max(tint.r, max(tint.g, tint.b)) > 0.0)) {
    return; /* adds no light */
  }
  vec3 a = window_coordinates(segment.near_end, target_size);
  vec3 b = window_coordinates(segment.far_end, target_size);
  vec2 d = b.xy - a.xy;
  float length2 = dot(d, d);
  if (!(length2 > 0.0)) {
    return;
  }
  precise float depth_a = max(dot(view_axis, trail_point(index, segment.s, segment.trail)) + view_offset, 0.0);
  precise float depth_b = max(dot(view_axis, trail_point(index, segment.s + 1, segment.trail)) + view_offset, 0.0);
  float reach_a = max(particle_radius_px(index, look_now, pixel_scale, segment.near_end.w) * trail_width *
                      mix(1.0, trail_width_end, t_a), 1.0) + 0.5;
  float reach_b = max(particle_radius_px(index, look_now, pixel_scale, segment.far_end.w) * trail_width *
                      mix(1.0, trail_width_end, t_b), 1.0) + 0.5;
  float reach = max(reach_a, reach_b);
  ivec2 low = ivec2(clamp(floor(min(a.xy, b.xy) - reach), vec2(0.0), vec2(target_size)));
  ivec2 high = ivec2(clamp(ceil(max(a.xy, b.xy) + reach), vec2(-1.0), vec2(target_size - 1)));
  if (any(lessThan(high, low)) || (high.x - low.x + 1) * (high.y - low.y + 1) > MAX_SEGMENT_PIXELS) {
    return;
  }
  float inverse_length = inversesqrt(length2);
  for (int y = low.y; y <= high.y; y++) {
    for (int x = low.x; x <= high.x; x++) {
      vec2 offset = vec2(float(x), float(y)) + 0.5 - a.xy;
      float along = dot(offset, d) / length2;
      float across = abs(offset.x * d.y - offset.y * d.x) * inverse_length;
      if (along >= 0.0 && along <= 1.0 && across < mix(reach_a, reach_b, along)) {
        imageAtomicMin(particle_depth, ivec2(x, y), floatBitsToUint(mix(depth_a, depth_b, along)));
      }
    }
  }
}
