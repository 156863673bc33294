/* Additive trails by tiles, step 3 (trail_tiles.py): one workgroup per 16x16 tile, one thread per pixel, adds
 * the tile's trail segments (trail_footprint.glsl) into `layer`.  A segment adds to the pixels whose centers
 * project inside it (along in [0, 1): consecutive segments share no pixel) within its interpolated half width
 * plus 1/2: color and half width interpolated between its ends, the color times the coverage
 * clamp(half + 1/2 - across, 0, 1).  tile_sum.glsl's walk: each pixel read and written once, without atomics,
 * the segments added in particle and segment order; SPRITE_DEPTH_TEST: a segment behind the scene's depth at
 * a pixel (its ends' depths interpolated) is hidden there. */

/* Chunk entry t as the walk reads it: s_shapes the start a (xy), a's depth (z) and b's less a's (w); s_streaks
 * b - a, 1 / its squared length and 1 / its length; s_colors a's color and half width; s_ends b's less a's (each
 * a pixel's interpolation one multiply-add). */
void share_footprint(int t, Footprint footprint)
{
  vec2 streak = footprint.streak;
  float length2 = dot(streak, streak);
  s_shapes[t].xy = footprint.center - 0.5 * streak;
  s_streaks[t] = vec4(streak, 1.0 / length2, inversesqrt(length2));
  s_colors[t] = footprint.color;
}

/* After share_footprint (the same entry's start): ``depths``, the footprint's end_depths. */
void share_trail_end(int t, TrailEnd end, vec2 depths)
{
  s_shapes[t].zw = vec2(depths.x, depths.y - depths.x);
  s_ends[t] = vec4(end.color, end.half_width) - s_colors[t];
}

/* `sum` plus chunk entry k's segment at pixel p, unless it misses p or is behind the scene there.  The block
 * walk skips the spans' test: it visits only entries that reach the pixel's block, and past the segment's
 * rectangle its coverage is exactly 0; the walk over all entries needs it (entries past the list are stale). */
vec3 add_footprint(vec3 sum, int k, TilePixel p)
{
#ifndef BLOCK_WALK
  if (!tile_spans(s_spans[k], p.bits)) {
    return sum;
  }
#endif
  vec4 start = s_shapes[k];
  vec4 d = s_streaks[k];
  vec2 offset = p.at - start.xy;
  float along = dot(offset, d.xy) * d.z;
  if (along >= 0.0 && along < 1.0 && start.z + start.w * along <= p.scene) {
    vec4 at = s_colors[k] + s_ends[k] * along; /* color and half width */
    float across = abs(offset.x * d.y - offset.y * d.x) * d.w;
    sum += at.rgb * clamp(at.w + 0.5 - across, 0.0, 1.0);
  }
  return sum;
}

void main()
{
  sum_tile();
}
