/* Additive quads by tiles, step 1 (quad_tiles.py): per particle, the quad the rasterized quads draw
 * (quad_frame.glsl): its frame (quad_axes), its color (and in w its inner2), and the footprint the tile lists bin
 * (sprite_shape.glsl: center, radius_px across, window depth; the streak, along the axis, 2 (half_length
 * - radius_px): the capsule quad_falloff lights) with how many 16x16 tiles it touches.  A particle the
 * rasterizer draws nothing of (dead, behind the camera, past the near or far plane) gets radius 0: no
 * tiles. */

void main()
{
  int slot = sprite_linear_index();
  if (slot >= count) {
    return;
  }
  SpriteShape shape = sprite_shape_from(vec4(0.0));
  QuadAxes axes = quad_axes_from(vec4(1.0, 0.0, 0.0, 1.0));
  vec2 streak = vec2(0.0);
  vec4 color = vec4(0.0); /* w: the quad's inner2 (quad_frame.glsl) */
  Particle particle;
  if (fetch_particle(slot, particle)) {
    vec4 clip = view_proj * vec4(particle.position, 1.0);
    if (clip.w > 0.0 && abs(clip.z) <= clip.w) { /* the rasterizer's clipping: every corner at this z and w */
      QuadFrame quad = quad_frame(slot, particle, clip, target_extent);
      if (is_finite(vec3(quad.center, quad.half_length)) && is_finite(quad.color)) {
        shape = SpriteShape(quad.center, quad.radius_px, clip.z / clip.w * 0.5 + 0.5);
        streak = quad.along * (2.0 * (quad.half_length - quad.radius_px));
        axes = QuadAxes(quad.along, 0.5 * quad.streak / quad.radius_px, quad.core);
        color = vec4(quad.color, quad.inner2);
      }
    }
  }
  ivec2 out_texel = particle_texel(slot, imageSize(sprite_shapes).x);
  store_sprite_shape(out_texel, shape);
  store_quad_axes(out_texel, axes);
  imageStore(sprite_streaks, out_texel, vec4(streak, 0.0, 0.0));
  imageStore(sprite_colors, out_texel, color);
  imageStore(instance_counts, out_texel, uvec4(uint(sprite_tile_count(shape, streak, ivec2(target_extent)))));
}
