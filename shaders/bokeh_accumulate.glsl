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

void share_footprint(int t, SpriteShape shape, vec2 streak, vec4 color)
{
  s_shapes[t] = sprite_shape_texel(shape);
  s_streaks[t] = vec4(streak, 0.0, 0.0);
  s_colors[t] = color;
}

/* `sum` plus chunk entry k's disc at pixel p, unless it misses p or is behind the scene there. */
vec3 add_disc(vec3 sum, int k, TilePixel p)
{
  SpriteShape shape = sprite_shape_from(s_shapes[k]);
  if (tile_spans(s_spans[k], p.bits) && shape.depth <= p.scene) {
    sum += s_colors[k].rgb * disc_coverage(shape, s_streaks[k].xy, p.at);
  }
  return sum;
}

void main()
{
  int t = int(gl_LocalInvocationIndex);
  TilePixel p = tile_pixel();
  ivec2 list = tile_list();
  int n = list.y;
  if (n == 0) {
    return; /* uniform over the workgroup: no barrier is skipped by some threads only */
  }
  vec4 held = p.inside ? imageLoad(layer, p.pixel) : vec4(0.0);
  vec3 sum = held.rgb;
  for (int chunk = 0; chunk < n; chunk += TILE_CHUNK) {
    share_tile_chunk(list, chunk, t);
    int m = min(TILE_CHUNK, n - chunk);
    /* Four entries an iteration (past the list their spans are 0: they add nothing): llvmpipe ends a
     * shader's loops after 65535 iterations in all (Mesa's LP_MAX_TGSI_LOOP_ITERATIONS), which cut a
     * tile's sum short beyond about 65,000 discs (a quarter of an extreme depth of field's light). */
    for (int k = 0; k < m; k += 4) {
      sum = add_disc(sum, k, p);
      sum = add_disc(sum, k + 1, p);
      sum = add_disc(sum, k + 2, p);
      sum = add_disc(sum, k + 3, p);
    }
    barrier();
  }
  if (p.inside) {
    imageStore(layer, p.pixel, vec4(sum, held.a)); /* additive: coverage (alpha) unchanged */
  }
}
