/* The particle layer's depth, step 3 for wide reaches (particle_depth.py):
 * one workgroup per 16x16 tile, one thread per pixel, takes the nearest depth
 * of the tile's listed reaches (particle_depth.glsl) that cover its pixel
 * (footprint.glsl's reach_covers, the test the narrow ones are marked by) and
 * marks it with one atomic min (other effects mark the same image). */

void share_footprint(int t, Footprint footprint)
{
  s_shapes[t] = sprite_shape_texel(sprite_shape_of(footprint));
  s_streaks[t] = vec4(0.5 * footprint.streak, 0.0, 0.0); /* the half path */
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
  uint nearest = FAR_BITS;
  for (int chunk = 0; chunk < n; chunk += TILE_CHUNK) {
    share_tile_chunk(list, chunk, t);
    int m = min(TILE_CHUNK, n - chunk);
    for (int k = 0; k < m; k++) {
      SpriteShape shape = sprite_shape_from(s_shapes[k]);
      if (tile_spans(s_spans[k], p.bits) && reach_covers(Reach(shape.center, s_streaks[k].xy, shape.radius), p.at)) {
        nearest = min(nearest, floatBitsToUint(shape.depth));
      }
    }
    barrier();
  }
  if (p.inside && nearest != FAR_BITS) {
    imageAtomicMin(particle_depth, p.pixel, nearest);
  }
}
