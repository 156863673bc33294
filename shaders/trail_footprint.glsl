/* Additive trails by tiles, step 1 (trail_tiles.py): an invocation a segment of the batch from first_segment
 * on, ``index`` x trail_length + s (written at its place in the batch), the same segments as
 * trail_ribbons.glsl (trail_fetch.glsl; with MOTION_BLUR the head is where the splat's streak ends, at
 * shutter close).  Writes the segment's band as a footprint the tile lists bin
 * (sprite_shape.glsl: the capsule from end a to end b, center their middle, radius the band's reach, depth
 * the nearer end's, streak b - a), with what trail_accumulate.glsl needs at each end: window depths
 * (end_depths), color and half width (a: the footprint's color, b: records.TRAIL_END), and how many 16x16
 * tiles it touches.  A segment thinner than a pixel keeps half a pixel's width and dims by its own width
 * instead.  Segments that draw nothing get radius 0, no tiles: past the ring's filled points, an end behind
 * the camera or outside its depth range, zero length on the screen, a box past the target, or larger than
 * MAX_SEGMENT_PIXELS (a trail sweeping past the lens). */

/* Whether the segment a -> b with ``reach`` has pixels on the target, and a box of at most MAX_SEGMENT_PIXELS. */
bool band_drawn(vec2 a, vec2 b, float reach, ivec2 size)
{
  ivec2 low = ivec2(clamp(floor(min(a, b) - reach), vec2(0.0), vec2(size)));
  ivec2 high = ivec2(clamp(ceil(max(a, b) + reach), vec2(-1.0), vec2(size - 1)));
  return all(greaterThanEqual(high, low)) && (high.x - low.x + 1) * (high.y - low.y + 1) <= MAX_SEGMENT_PIXELS;
}

void main()
{
  int entry = first_segment + SEGMENT_ENTRY;
  if (entry >= count * int(trail_length)) {
    return;
  }
  ivec2 size = ivec2(target_extent);
  Footprint footprint = footprint_from(vec4(0.0), vec4(0.0), vec4(0.0)); /* color: end a's color and half width */
  TrailEnd end = trail_end_from(vec4(0.0));
  TrailSegment segment;
  if (fetch_segment(entry, segment)) {
    int index = segment.index;
    Particle particle = segment.particle;
    vec3 a = window_coordinates(segment.near_end, size);
    vec3 b = window_coordinates(segment.far_end, size);
#ifdef MOTION_BLUR
    vec2 open_px, close_px;
    if (segment.s == 0 && shutter_path(particle.position, particle.velocity, vec2(size), open_px, close_px)) {
      a.xy = close_px;
    }
#endif
    vec2 d = b.xy - a.xy;
    vec4 look_now = particle_look(particle, particle.age / particle.life);
    float t_a = float(segment.s) / trail_length;
    float t_b = float(segment.s + 1) / trail_length;
    float half_a = particle_radius_px(index, look_now, pixel_scale, segment.near_end.w) * trail_width *
                   mix(1.0, trail_width_end, t_a);
    float half_b = particle_radius_px(index, look_now, pixel_scale, segment.far_end.w) * trail_width *
                   mix(1.0, trail_width_end, t_b);
    vec3 base = particle_color(index, look_now, 1.0);
    vec3 color_a = base * trail_tint_at(t_a) * min(half_a * 2.0, 1.0); /* thinner than a pixel: fainter */
    vec3 color_b = base * trail_tint_at(t_b) * min(half_b * 2.0, 1.0);
    half_a = max(half_a, 0.5);
    half_b = max(half_b, 0.5);
    float reach = max(half_a, half_b) + 0.5;
    if (dot(d, d) > 0.0 && is_finite(vec3(a.xy, reach)) && is_finite(vec3(b.xy, 0.0)) &&
        band_drawn(a.xy, b.xy, reach, size)) {
      footprint.center = a.xy + 0.5 * d;
      footprint.radius = reach;
      footprint.depth = min(a.z, b.z);
      footprint.streak = d;
      footprint.end_depths = vec2(a.z, b.z);
      footprint.color = vec4(color_a, half_a);
      end = TrailEnd(color_b, half_b);
    }
  }
  ivec2 out_texel = particle_texel(SEGMENT_ENTRY, imageSize(sprite_shapes).x);
  store_footprint(out_texel, footprint);
  store_trail_end(out_texel, end);
  int tiles = sprite_tile_count(sprite_shape_of(footprint), footprint.streak, size);
  imageStore(instance_counts, out_texel, uvec4(uint(tiles)));
}
