/* Trails of Alpha effects (addon/engine/simulate/trails.py): each segment a streak
 * footprint in the frame's sprite list (sprite_footprint.glsl's outputs), so
 * it is sorted, binned and blended with the sprites.  Entry first_sprite +
 * index x trail_length + s holds segment s of particle ``index`` (from trail
 * point s to s + 1, trail_fetch.glsl), at the depth of its middle.  The blend
 * spreads a streak's opacity over its length (sprite_blend.glsl); a segment
 * asks for that much more, up to opaque, so the ribbon keeps its opacity
 * along its length.  Segments that do not show get radius 0 and the last key.
 * SPRITE_TEXTURE (a frame with textured sprites: ribbons.POSED_SEGMENTS): each segment's pose written
 * as none into sprite_frames (store_sprite_entry), which the blend reads for every entry. */

void main()
{
  int entry = sprite_linear_index();
  int ring = int(trail_length);
  if (entry >= count * ring) {
    return;
  }
  int index = entry / ring;
  int segment = entry - index * ring;
  ivec2 size = ivec2(target_extent);
  SpriteEntry sprite = sprite_entry_from(vec4(0.0), vec4(0.0), vec4(0.0), uvec4(HIDDEN_KEY), vec4(0.0), vec4(0.0));
  Particle particle;
  Trail trail;
  if (fetch_trail(index, particle, trail) && segment < trail.filled) {
    vec4 near_end = transform_point(view_proj, trail_point(index, segment, trail));
    vec4 far_end = transform_point(view_proj, trail_point(index, segment + 1, trail));
    if (near_end.w > 0.0 && far_end.w > 0.0) {
      vec3 a = window_coordinates(near_end, size);
      vec3 b = window_coordinates(far_end, size);
      vec3 middle = 0.5 * (a + b);
      if (middle.z >= 0.0 && middle.z <= 1.0) {
        float t = (float(segment) + 0.5) / trail_length;
        vec4 look_now = particle_look(particle, particle.age / particle.life);
        float distance = 0.5 * (near_end.w + far_end.w);
        float radius_px = particle_radius_px(index, look_now, pixel_scale, distance) *
                          trail_width * mix(1.0, trail_width_end, t);
        float alpha = opacity * pixel_coverage(radius_px) * (1.0 - trail_fade * t);
        float radius = max(radius_px, 1.0);
        sprite.streak = a.xy - b.xy;
        float spread = radius / (radius + 0.5 * length(sprite.streak));
        float boost = alpha > 0.0 ? min(1.0 / spread, 1.0 / alpha) : 0.0;
        sprite.color = vec4(particle_color(index, look_now, 1.0) * mix(vec3(1.0), trail_color_end, t) * alpha, alpha) * boost;
        sprite.center = middle.xy;
        sprite.radius = radius;
        sprite.depth = middle.z;
        sprite.key = depth_key(view_proj, distance, middle.z);
      }
    }
  }
  ivec2 out_texel = particle_texel(first_sprite + entry, imageSize(sprite_shapes).x);
  store_sprite_entry(out_texel, sprite);
}
