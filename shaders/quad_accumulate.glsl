/* Additive quads by tiles, step 3 (quad_tiles.py): one workgroup per 16x16 tile, one thread per pixel,
 * adds the tile's quads into `layer`, each its color times quad_falloff at the pixel's centre: the
 * fragment the rasterized quads compute there (quad_frame.glsl).  tile_sum.glsl's walk: each pixel read
 * and written once, without atomics, the quads added in particle order from what the layer holds;
 * SPRITE_DEPTH_TEST: a quad behind the scene's depth at a pixel is hidden there (the rasterized quads'
 * LESS_EQUAL test). */

void share_footprint(int t, Footprint footprint)
{
  s_shapes[t] = sprite_shape_texel(sprite_shape_of(footprint));
  s_colors[t] = footprint.color;
}

void share_axes(int t, QuadAxes axes)
{
  s_axes[t] = quad_axes_texel(axes);
}

/* `sum` plus chunk entry k's quad at pixel p, unless it misses p or is behind the scene there. */
vec3 add_footprint(vec3 sum, int k, TilePixel p)
{
  SpriteShape shape = sprite_shape_from(s_shapes[k]);
  if (tile_spans(s_spans[k], p.bits) && shape.depth <= p.scene) {
    QuadAxes axes = quad_axes_from(s_axes[k]);
    vec2 offset = p.at - shape.center;
    vec2 across = vec2(-axes.along.y, axes.along.x);
    vec4 color = s_colors[k]; /* w: inner2 */
    float u = dot(offset, axes.along) / shape.radius, v = dot(offset, across) / shape.radius;
    sum += color.rgb * quad_falloff(u, v, axes.sweep, color.w, axes.core);
  }
  return sum;
}

void main()
{
  sum_tile();
}
