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
  Footprint footprint = footprint_from(vec4(0.0), vec4(0.0), vec4(0.0)); /* color w: the quad's inner2 (quad_frame.glsl) */
  QuadAxes axes = quad_axes_from(vec4(1.0, 0.0, 0.0, 1.0));
  Particle particle;
  if (fetch_particle(slot, particle)) {
    vec4 clip = view_proj * vec4(particle.position, 1.0);
    if (clip.w > 0.0 && abs(clip.z) <= clip.w) { /* the rasterizer's clipping: every corner at this z and w */
      QuadFrame quad = quad_frame(slot, particle, clip, target_extent);
      if (is_finite(vec3(quad.center, quad.half_length)) && is_finite(quad.color)) {
        footprint.center = quad.center;
        footprint.radius = quad.radius_px;
        footprint.depth = clip.z / clip.w * 0.5 + 0.5;
        footprint.streak = quad.along * (2.0 * (quad.half_length - quad.radius_px));
        footprint.color = vec4(quad.color, quad.inner2);
        axes = QuadAxes(quad.along, 0.5 * quad.streak / quad.radius_px, quad.core);
      }
    }
  }
  ivec2 out_texel = particle_texel(slot, imageSize(sprite_shapes).x);
  store_footprint(out_texel, footprint);
  store_quad_axes(out_texel, axes);
  int tiles = sprite_tile_count(sprite_shape_of(footprint), footprint.streak, ivec2(target_extent));
  imageStore(instance_counts, out_texel, uvec4(uint(tiles)));
}
