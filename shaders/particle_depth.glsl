/* The nearest particle's view depth per pixel: what the render's compositor
 * compares with the scene's own depth pass (Blender's Z: distance along the
 * camera axis).  A particle marks every pixel its light covers
 * (footprint.glsl's Reach: the splat's taps along its motion-blur streak and
 * over its circle of confusion, a bokeh disc, a sprite), with the splat's cull
 * (in front of the camera and inside its depth range: a streak reaches into
 * the view from beside it).  Non-negative floats order like their bit
 * patterns, so one atomic min on the bits keeps the nearest.  A particle that
 * adds no light (black, or zero strength) marks nothing.
 *
 * A reach up to DIRECT_REACH pixels from its center is marked here, pixel by
 * pixel; a wider one (long streaks, wide discs and sprites) goes into the
 * footprint list (the record of every slot: radius 0 for those marked here),
 * whose tiles particle_depth_tiles.glsl marks, a thread a pixel. */

/* The reach of a particle of `reach_kind` (particle_depth.py: REACH_POINT, REACH_SPRITE, REACH_TEXTURED: a
 * textured sprite's square reaches sqrt(2) times its radius, sprite_sheets.py; REACH_QUAD: an additive quad
 * as far as its filter's tail reaches, quad_reach_px, and back to its stretched tail); with DEPTH_OF_FIELD a
 * sprite's radius is widened by its circle of confusion as raster_quads.glsl and sprite_footprint.glsl draw it. */
/* How far a stretched quad reaches back from its head: to where it was stretch_seconds ago, as quad_frame.glsl
 * draws it (0 for other particle types: stretch_seconds is 0). */
vec2 stretch_px(vec3 position, vec3 velocity, vec2 here, vec2 size)
{
  precise vec3 tail = position - velocity * stretch_seconds;
  vec4 tail_clip = transform_point(view_proj, tail);
  if (!(tail_clip.w > 0.0) || !is_finite(velocity)) {
    return vec2(0.0);
  }
  precise vec2 motion = here - screen_of(tail_clip, size);
  return motion;
}

Reach particle_reach(int index, vec3 position, vec3 velocity, vec4 clip, vec4 look_now)
{
  vec2 size = vec2(target_size);
  vec2 here = window_coordinates(clip, target_size).xy;
  vec2 start, end;
  screen_path(position, velocity, here, size, start, end);
  if (reach_kind == REACH_QUAD) {
    start -= stretch_px(position, velocity, here, size);
  }
  if (reach_kind != REACH_POINT) {
    float square = reach_kind == REACH_TEXTURED ? sqrt(2.0) : 1.0;
    float radius = particle_radius_px(index, look_now, pixel_scale, clip.w);
    if (reach_kind == REACH_QUAD) {
      float light = 1.0, inner, core;
      radius = quad_reach_px(max(radius, 1.0), clip.w, light, inner, core);
    } else {
#ifdef DEPTH_OF_FIELD
      radius = focus_widened_px(max(radius, 1.0), clip.w); /* the sprite out of focus */
#endif
    }
    return sprite_reach(start, end, square * radius);
  }
  float spread = 0.0;
#ifdef DEPTH_OF_FIELD
  spread = coc_radius_px(clip.w);
#endif
  return point_reach(start, end, spread);
}

void main()
{
  int slot = invocation_slot();
  if (slot >= count) {
    return;
  }
  int index;
  Particle particle;
  Reach reach = Reach(vec2(0.0), vec2(0.0), 0.0);
  precise float depth = 0.0;
  if (read_particle(slot, index, particle)) {
    vec4 clip = transform_point(view_proj, particle.position);
    vec4 look_now = particle_look(particle, div_rn(particle.age, particle.life));
    if (in_depth_range(clip) && particle_shows(index, look_now)) {
      reach = particle_reach(index, particle.position, particle.velocity, clip, look_now);
      depth = max(dot(view_axis, particle.position) + view_offset, 0.0);
    }
  }
  bool wide = reach.radius + max(abs(reach.half_path.x), abs(reach.half_path.y)) > DIRECT_REACH;
#ifdef WIDE_LIST
  ivec2 texel = particle_texel(slot, imageSize(sprite_shapes).x);
  Footprint footprint = footprint_from(vec4(0.0), vec4(0.0), vec4(0.0)); /* no color: the list is of depths */
  footprint.center = reach.center;
  footprint.radius = wide ? reach.radius : 0.0;
  footprint.depth = depth;
  footprint.streak = 2.0 * reach.half_path;
  store_footprint(texel, footprint);
  int tiles = sprite_tile_count(sprite_shape_of(footprint), footprint.streak, target_size);
  imageStore(instance_counts, texel, uvec4(uint(tiles)));
#endif
  if (wide || !(reach.radius > 0.0)) {
    return;
  }
  uint bits = floatBitsToUint(depth);
  ivec4 rect = reach_pixel_rect(reach, target_size);
  for (int y = rect.y; y <= rect.w; y++) {
    for (int x = rect.x; x <= rect.z; x++) {
      if (reach_covers(reach, vec2(x, y) + 0.5)) {
        imageAtomicMin(particle_depth, ivec2(x, y), bits);
      }
    }
  }
}
