/* Bokeh discs, step 3 (bokeh.py): one workgroup per 16x16 tile, one thread
 * per pixel, adds the tile's discs (disc_coverage x color) into `layer`, the
 * additive layer the resolve adds to the splat.  Every pixel belongs to one
 * workgroup, so it is read and written once, without atomics; the sum starts
 * from what the layer holds and adds the discs in list order (the binning is
 * stable): the rasterized sprites' blending order, and the same result every
 * run.  The discs come through shared memory TILE_CHUNK at a time, a pixel
 * skipping those whose rectangle misses its row or column (tile_list.glsl).
 * SPRITE_DEPTH_TEST: a disc behind the scene's depth at a pixel is hidden
 * there (the rasterized path's LESS_EQUAL test). */

void main()
{
  int t = int(gl_LocalInvocationIndex);
  ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
  bool inside = all(lessThan(pixel, target_size));
  ivec2 list = tile_list();
  int n = list.y;
  if (n == 0) {
    return; /* uniform over the workgroup: no barrier is skipped by some threads only */
  }
  float scene = 1.0;
#ifdef SPRITE_DEPTH_TEST
  scene = inside ? texelFetch(scene_depth, pixel, 0).r : 0.0;
#endif
  uint pixel_bits = tile_pixel_bits();
  vec2 at = vec2(pixel) + 0.5;
  vec4 held = inside ? imageLoad(layer, pixel) : vec4(0.0);
  vec3 sum = held.rgb;
  for (int chunk = 0; chunk < n; chunk += TILE_CHUNK) {
    load_tile_chunk(list, chunk, t);
    barrier();
    int m = min(TILE_CHUNK, n - chunk);
    for (int k = 0; k < m; k++) {
      vec4 shape = s_shapes[k];
      if (tile_spans(s_spans[k], pixel_bits) && shape.w <= scene) {
        sum += s_colors[k].rgb * disc_coverage(shape, s_streaks[k], at);
      }
    }
    barrier();
  }
  if (inside) {
    imageStore(layer, pixel, vec4(sum, held.a)); /* additive: coverage (alpha) unchanged */
  }
}
