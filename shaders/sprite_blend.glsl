/* Tile-binned alpha sprites, step 6: one workgroup per 16x16 tile, one thread
 * per pixel, walks the tile's sprites nearest first (the binning kept depth
 * order) and composites them front to back, "under":
 *     color += transmittance * sprite, transmittance *= 1 - sprite alpha,
 * which equals premultiplied "over" back to front, but is exact per pixel
 * and lets a pixel stop once it is opaque.  The sprites come through shared
 * memory 256 at a time, each with the rows and columns of the tile its pixel
 * rectangle spans as two 16-bit masks, so a pixel skips a sprite that cannot
 * cover it with one test; the tile stops when every pixel is opaque.
 * SPRITE_DEPTH_TEST: a sprite behind the scene's depth at a pixel is hidden
 * there (the rasterized path's LESS_EQUAL test). */

/* Bits first..last (tile-relative, clamped to the tile) of a 16-bit mask; 0 when they miss the tile. */
uint tile_span_mask(int first, int last)
{
  int low = max(first, 0);
  int high = min(last, SPRITE_TILE - 1);
  return high < low ? 0u : ((2u << uint(high)) - (1u << uint(low)));
}

const float OPAQUE_TRANSMITTANCE = 1.0 / 4096.0; /* what is left to see is below 1/4096 */
const int CHUNK = 256;

void main()
{
  int t = int(gl_LocalInvocationIndex);
  ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
  bool inside = all(lessThan(pixel, target_size));
  int tile = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
  int lists_width = imageSize(tile_offsets).x;
  int first = int(imageLoad(tile_offsets, particle_texel(tile, lists_width)).x);
  int n = int(imageLoad(tile_counts, particle_texel(tile, lists_width)).x);
  float scene = 1.0;
#ifdef SPRITE_DEPTH_TEST
  scene = inside ? texelFetch(scene_depth, pixel, 0).r : 0.0;
#endif
  ivec2 tile_origin = ivec2(gl_WorkGroupID.xy) * SPRITE_TILE;
  uint pixel_bits = (1u << (16u + gl_LocalInvocationID.y)) | (1u << gl_LocalInvocationID.x);
  vec2 at = vec2(pixel) + 0.5;
  vec3 color = vec3(0.0);
  float transmittance = 1.0;
  bool open = inside;
  int items_width = imageSize(binned_sprites).x;
  int shapes_width = imageSize(sprite_shapes).x;
  for (int chunk = 0; chunk < n; chunk += CHUNK) {
    if (t == 0) {
      s_open[0] = 0u;
    }
    if (chunk + t < n) {
      uint sprite = imageLoad(binned_sprites, particle_texel(first + chunk + t, items_width)).x;
      ivec2 texel = particle_texel(int(sprite), shapes_width);
      s_shapes[t] = imageLoad(sprite_shapes, texel);
      s_streaks[t] = imageLoad(sprite_streaks, texel).xy;
      s_colors[t] = imageLoad(sprite_colors, texel);
      ivec4 rect = sprite_pixel_rect(s_shapes[t], s_streaks[t], target_size) - tile_origin.xyxy;
      s_spans[t] = tile_span_mask(rect.y, rect.w) << 16u | tile_span_mask(rect.x, rect.z);
    }
    barrier();
    if (open) {
      int m = min(CHUNK, n - chunk);
      for (int k = 0; k < m; k++) {
        if ((s_spans[k] & pixel_bits) != pixel_bits) {
          continue;
        }
        vec4 shape = s_shapes[k];
        if (shape.w > scene) {
          continue;
        }
        float coverage = sprite_coverage(shape, s_streaks[k], at);
        if (coverage > 0.0) {
          vec4 sprite = s_colors[k] * coverage;
          color += transmittance * sprite.rgb;
          transmittance *= 1.0 - sprite.a;
        }
      }
      open = transmittance >= OPAQUE_TRANSMITTANCE;
      if (open) {
        atomicAdd(s_open[0], 1u);
      }
    }
    barrier();
    bool any_open = s_open[0] != 0u;
    barrier();
    if (!any_open) {
      break;
    }
  }
  if (inside) {
    imageStore(layer, pixel, vec4(color, 1.0 - transmittance));
  }
}
