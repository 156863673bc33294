/* Tile-binned alpha sprites, step 1: each particle's footprint (sprite_shape.glsl),
 * premultiplied color and depth key, at entry first_sprite + slot of the frame's
 * sprite list (every Alpha effect of the frame shares one list, so sprites of
 * different effects interleave by depth).  Sprites that do not show (unborn,
 * dead, behind the camera, outside the depth range) get radius 0 (no tiles)
 * and the last key.  sweep_seconds > 0: the footprint is swept along the particle's
 * screen motion over that many seconds before now (motion blur); DEPTH_OF_FIELD: widened by
 * the circle of confusion (footprint.DEPTH_OF_FIELD).  SPRITE_TEXTURE
 * (sprite_sheets.POSED): each sprite's sheet slot and pose into sprite_frames too;
 * SPRITE_RELIEF (sprite_sheets.RELIEF_FOOTPRINT): and where its light comes from
 * (particle_light_direction), turned into its frame, times sprite_relief into sprite_lights. */

void main()
{
  int slot = sprite_linear_index();
  if (slot >= count) {
    return;
  }
  Particle particle;
  bool alive = fetch_particle(slot, particle);
  ivec2 size = ivec2(target_extent);

  SpriteEntry entry = sprite_entry_from(vec4(0.0), vec4(0.0), vec4(0.0), uvec4(HIDDEN_KEY), vec4(0.0), vec4(0.0));
  vec4 clip = transform_point(view_proj, particle.position);
  if (alive && clip.w > 0.0) {
    vec3 window = window_coordinates(clip, size);
    if (window.z >= 0.0 && window.z <= 1.0) {
      vec4 look_now = particle_look(particle, particle.age / particle.life);
      float radius_px = particle_radius_px(slot, look_now, pixel_scale, clip.w);
      /* Below one pixel the sprite stays one pixel and gets fainter. */
      float alpha = opacity * pixel_coverage(radius_px);
      radius_px = max(radius_px, 1.0);
#ifdef DEPTH_OF_FIELD
      radius_px = focus_blurred_px(radius_px, clip.w, alpha); /* out of focus: wider, fainter, the same cover */
#endif
      entry.color = vec4(particle_color(slot, look_now, 1.0) * alpha, alpha);
      if (sweep_seconds > 0.0 && is_finite(particle.velocity)) {
        vec4 tail = transform_point(view_proj, particle.position - particle.velocity * sweep_seconds);
        if (tail.w > 0.0) {
          vec2 motion = window.xy - window_coordinates(tail, size).xy;
          entry.streak = motion;
          window.xy -= 0.5 * motion; /* the streak's middle */
        }
      }
      entry.center = window.xy;
      entry.radius = radius_px;
      entry.depth = window.z;
      entry.key = depth_key(view_proj, clip.w, window.z);
#ifdef SPRITE_TEXTURE
      if (sheet_slot > 0.0) {
        float angle = sprite_angle(slot, particle.age, screen_velocity(clip, particle.velocity, target_extent));
        entry.sheet = sheet_slot;
        entry.turn = vec2(cos(angle), sin(angle));
        entry.flipbook = flipbook_position(slot, particle.age, particle.life);
        entry.radius *= sheet_reach; /* as far as the sheet shows (at most its square's corners) */
#ifdef SPRITE_RELIEF
        if (sprite_relief > 0.0) {
          int width = textureSize(particle_light_direction, 0).x;
          vec2 seen = texelFetch(particle_light_direction, particle_texel(slot, width), 0).xy * sprite_relief;
          vec2 turn = entry.turn;
          entry.lights = vec2(turn.x * seen.x + turn.y * seen.y, turn.x * seen.y - turn.y * seen.x);
        }
#endif
      }
#endif
    }
  }
  ivec2 out_texel = particle_texel(first_sprite + slot, imageSize(sprite_shapes).x);
  store_sprite_entry(out_texel, entry);
}
