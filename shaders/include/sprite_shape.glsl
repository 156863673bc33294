/* A footprint on the screen, shared by the tile-binned compositors' kernels
 * (tile_lists.py: alpha sprites and bokeh discs): a disc reaching `radius`
 * pixels from `center`, swept along `stretch` (pixels, head minus tail over
 * the shutter; zero for a round one), at window depth `depth`: a capsule.
 * Binning takes the tiles of its pixel rectangle the capsule reaches
 * (sprite_row_tiles), blending its coverage of a pixel center: an alpha
 * sprite's soft Gaussian reaching zero at `radius` (SPRITE_FALLOFF; spreading
 * the same energy over a longer streak: sprite_blend.glsl), a bokeh disc's
 * flat top with a one-pixel rim (disc_coverage).  A SpriteShape record
 * (records.SPRITE_SHAPE) holds center, radius and depth; SPRITE_TILE comes from tables.py. */

const float SPRITE_FALLOFF = 4.0;

/* Pixels whose centers the footprint may cover: (x0, y0, x1, y1), empty when x1 < x0. */
ivec4 sprite_pixel_rect(SpriteShape shape, vec2 stretch, ivec2 size)
{
  if (!(shape.radius > 0.0)) {
    return ivec4(0, 0, -1, -1);
  }
  vec2 reach = abs(stretch) * 0.5 + shape.radius;
  vec2 low = floor(shape.center - reach - 0.5);
  vec2 high = floor(shape.center + reach - 0.5) + 1.0;
  /* Clamped as floats first: a sprite far off screen must not overflow int. */
  ivec2 first = ivec2(clamp(low, vec2(0.0), vec2(size)));
  ivec2 last = ivec2(clamp(high, vec2(-1.0), vec2(size - 1)));
  return ivec4(first, last);
}

/* The 16x16 tiles under the pixel rectangle: (tx0, ty0, tx1, ty1). */
ivec4 sprite_tile_rect(SpriteShape shape, vec2 stretch, ivec2 size)
{
  ivec4 pixels = sprite_pixel_rect(shape, stretch, size);
  if (pixels.z < pixels.x || pixels.w < pixels.y) {
    return ivec4(0, 0, -1, -1);
  }
  return pixels / SPRITE_TILE;
}

const float NO_BOUND = 3.0e38; /* past any pixel */

/* How far past its radius a footprint is taken to reach by the binning: 1/16 pixel, and 2^-20 of its size and
 * distance from the origin (every kernel's coverage ends at the radius but for a few float32 ulps of those). */
float reach_margin(SpriteShape shape, vec2 stretch)
{
  precise float size = (max(abs(shape.center.x), abs(shape.center.y)) + max(abs(stretch.x), abs(stretch.y))) +
                       shape.radius;
  precise float margin = 0.0625 + size * (1.0 / 1048576.0);
  return margin;
}

/* The x extent (left, right) of the points within `reach` of the footprint's path with y from y0 to y1: its
 * path clipped to y0 - reach .. y1 + reach, widened by `reach` (a little wider than the capsule's own extent
 * there, never narrower); left > right when the path passes above or below, (-NO_BOUND, NO_BOUND) when the
 * arithmetic is not finite.  Unfused, IEEE division (div_rn): reference/order/tile_lists.py decides alike. */
vec2 path_reach_x(SpriteShape shape, vec2 stretch, float reach, float y0, float y1)
{
  precise vec2 tail = shape.center - 0.5 * stretch;
  precise vec2 head = shape.center + 0.5 * stretch;
  precise float low = max(min(tail.y, head.y), y0 - reach);
  precise float high = min(max(tail.y, head.y), y1 + reach);
  if (high < low) {
    return vec2(1.0, -1.0);
  }
  precise float x0 = tail.x, x1 = head.x; /* a level path: all of it */
  precise float rise = head.y - tail.y;
  if (rise != 0.0) {
    precise float slope = div_rn(head.x - tail.x, rise);
    x0 = tail.x + (low - tail.y) * slope;
    x1 = tail.x + (high - tail.y) * slope;
  }
  precise float left = min(x0, x1) - reach;
  precise float right = max(x0, x1) + reach;
  return left <= right ? vec2(left, right) : vec2(-NO_BOUND, NO_BOUND);
}

/* Whether a footprint takes its tile rectangle's whole rows: a round one (no stretch), and every one with
 * WHOLE_ROWS (the alpha sprites' lists: tile_lists.WHOLE_ROWS says why). */
bool whole_rows(vec2 stretch)
{
#ifdef WHOLE_ROWS
  return true;
#else
  return stretch == vec2(0.0);
#endif
}

/* The columns (tx0, tx1) of tile row `ty` of `tiles` (sprite_tile_rect) that the footprint may reach, empty
 * when tx1 < tx0: the tiles of the pixels whose centres path_reach_x gives over the row's pixel centres,
 * `radius` plus reach_margin from the path, so that a tile with a pixel centre nearer the path than `radius`
 * (where bokeh's disc_coverage, quad_falloff and footprint.glsl's reach_covers end) is never left out, and a
 * diagonal streak skips most of its rectangle, or the rectangle's whole row (whole_rows).  Count
 * (sprite_tile_count) and enumeration (sprite_instances.glsl) both come from here: they cannot disagree. */
ivec2 sprite_row_tiles(SpriteShape shape, vec2 stretch, ivec4 tiles, int ty, ivec2 size)
{
  if (whole_rows(stretch)) {
    return tiles.xz;
  }
  precise float reach = shape.radius + reach_margin(shape, stretch);
  float top = float(ty * SPRITE_TILE) + 0.5;
  vec2 x = path_reach_x(shape, stretch, reach, top, top + float(SPRITE_TILE - 1));
  /* Clamped as floats first, as sprite_pixel_rect: far off screen must not overflow int. */
  int first = int(clamp(ceil(x.x - 0.5), 0.0, float(size.x)));
  int last = int(clamp(floor(x.y - 0.5), -1.0, float(size.x - 1)));
  if (x.y < x.x || last < first) {
    return ivec2(0, -1);
  }
  return ivec2(max(first / SPRITE_TILE, tiles.x), min(last / SPRITE_TILE, tiles.z));
}

/* How many tiles sprite_row_tiles gives the footprint: row by row for a streak, the rectangle's where every row
 * is whole (whole_rows): a loop over rows doubled the alpha sprites' count pass. */
int sprite_tile_count(SpriteShape shape, vec2 stretch, ivec2 size)
{
  ivec4 tiles = sprite_tile_rect(shape, stretch, size);
  if (!whole_rows(stretch)) {
    int count = 0;
    for (int ty = tiles.y; ty <= tiles.w; ty++) {
      ivec2 columns = sprite_row_tiles(shape, stretch, tiles, ty, size);
      count += max(columns.y - columns.x + 1, 0);
    }
    return count;
  }
  return max(tiles.z - tiles.x + 1, 0) * max(tiles.w - tiles.y + 1, 0);
}

/* From the nearest point of the footprint's path (its center swept along `stretch`) to `at`. */
vec2 offset_from_path(SpriteShape shape, vec2 stretch, vec2 at)
{
  vec2 offset = at - shape.center;
  float length2 = dot(stretch, stretch);
  if (length2 > 0.0) {
    offset -= clamp(dot(offset, stretch) / length2, -0.5, 0.5) * stretch;
  }
  return offset;
}

/* Coverage of the pixel centered at `at` by a bokeh disc: 1 inside, fading
 * over the last pixel to 0 at `radius` (the circle of confusion plus 1/2). */
float disc_coverage(SpriteShape shape, vec2 stretch, vec2 at)
{
  return clamp(shape.radius - length(offset_from_path(shape, stretch, at)), 0.0, 1.0);
}

/* Depth keys of the sprite list: 16 bits, so its depth order takes two radix passes (sprites.py DEPTH_KEYS).
 * Through a perspective camera a key is the view distance (clip w) as a float's top bits: its exponent and
 * 11 bits of mantissa, steps of 1/2048 of the distance (5 mm at 10 units, 5 cm at 100; 24-bit window depth
 * with the near plane at 0.1 was finer up to ~800 units), over 32 octaves from NEAREST_KEYED_DISTANCE (nearer sprites
 * share key 0).  Through an orthographic camera (w is 1 everywhere: its view_proj's last row is 0 0 0 1)
 * it is the window depth in 16-bit fixed point.  Ties keep list order; hidden sprites sort after all. */
const uint HIDDEN_KEY = 0xFFFFu;
const float NEAREST_KEYED_DISTANCE = 1.0 / 1024.0;
const uint DISTANCE_KEY_SHIFT = 12u; /* of a float's 23 mantissa bits, 11 kept */

uint depth_key(mat4 view_proj, float distance, float window_depth)
{
  bool orthographic = view_proj[0][3] == 0.0 && view_proj[1][3] == 0.0 && view_proj[2][3] == 0.0;
  uint key = orthographic ? uint(window_depth * float(HIDDEN_KEY)) : /* truncated, no rounding to fuse */
                 (floatBitsToUint(max(distance, NEAREST_KEYED_DISTANCE)) -
                  floatBitsToUint(NEAREST_KEYED_DISTANCE)) >> DISTANCE_KEY_SHIFT;
  return min(key, HIDDEN_KEY - 1u); /* near first */
}

int sprite_linear_index()
{
  return int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256 + int(gl_LocalInvocationIndex);
}
