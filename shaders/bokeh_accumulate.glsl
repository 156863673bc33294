/* Bokeh discs, step 3 (bokeh.py): one workgroup per 16x16 tile, one thread
 * per pixel, adds the tile's discs (disc_coverage x color) into `layer`, the
 * additive layer the resolve adds to the splat.  Every pixel belongs to one
 * workgroup, so it is read and written once, without atomics; the sum starts
 * from what the layer holds and adds the discs in list order (the binning is
 * stable): the rasterized sprites' blending order, and the same result every
 * run.  The discs come through shared memory CHUNK at a time.
 * SPRITE_DEPTH_TEST: a disc behind the scene's depth at a pixel is hidden
 * there (the rasterized path's LESS_EQUAL test). */

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
  if (n == 0) {
    return; /* uniform over the workgroup: no barrier is skipped by some threads only */
  }
  float scene = 1.0;
#ifdef SPRITE_DEPTH_TEST
  scene = inside ? texelFetch(scene_depth, pixel, 0).r : 0.0;
#endif
  vec2 at = vec2(pixel) + 0.5;
  vec4 held = inside ? imageLoad(layer, pixel) : vec4(0.0);
  vec3 sum = held.rgb;
  int items_width = imageSize(binned_sprites).x;
  int shapes_width = imageSize(sprite_shapes).x;
  for (int chunk = 0; chunk < n; chunk += CHUNK) {
    if (chunk + t < n) {
      uint disc = imageLoad(binned_sprites, particle_texel(first + chunk + t, items_width)).x;
      ivec2 texel = particle_texel(int(disc), shapes_width);
      s_shapes[t] = imageLoad(sprite_shapes, texel);
      s_streaks[t] = imageLoad(sprite_streaks, texel).xy;
      s_colors[t] = imageLoad(sprite_colors, texel);
    }
    barrier();
    int m = min(CHUNK, n - chunk);
    for (int k = 0; k < m; k++) {
      vec4 shape = s_shapes[k];
      if (shape.w <= scene) {
        sum += s_colors[k].rgb * disc_coverage(shape, s_streaks[k], at);
      }
    }
    barrier();
  }
  if (inside) {
    imageStore(layer, pixel, vec4(sum, held.a)); /* additive: coverage (alpha) unchanged */
  }
}
