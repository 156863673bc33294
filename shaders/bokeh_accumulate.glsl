/* Bokeh discs, step 3 (bokeh.py): one workgroup per 16x16 tile, one thread
 * per pixel, adds the tile's discs (disc_coverage x color) into `layer`, the
 * additive layer the resolve adds to the splat (tile_sum.glsl's walk: each
 * pixel read and written once, without atomics, the discs added in list
 * order, the rasterized sprites' blending order).  The discs come through
 * shared memory TILE_CHUNK at a time, a pixel skipping those whose rectangle
 * misses its row or column (tile_list.glsl).
 * SPRITE_DEPTH_TEST: a disc behind the scene's depth at a pixel is hidden
 * there (the rasterized path's LESS_EQUAL test). */

void share_footprint(int t, Footprint footprint)
{
  s_shapes[t] = sprite_shape_texel(sprite_shape_of(footprint));
  s_streaks[t] = vec4(footprint.streak, 0.0, 0.0);
  s_colors[t] = footprint.color;
}

/* `sum` plus chunk entry k's disc at pixel p, unless it misses p or is behind the scene there. */
vec3 add_footprint(vec3 sum, int k, TilePixel p)
{
  SpriteShape shape = sprite_shape_from(s_shapes[k]);
  if (tile_spans(s_spans[k], p.bits) && shape.depth <= p.scene) {
    sum += s_colors[k].rgb * disc_coverage(shape, s_streaks[k].xy, p.at);
  }
  return sum;
}

void main()
{
  sum_tile();
}
