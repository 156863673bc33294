/* A footprint on the screen, shared by the tile-binned compositors' kernels
 * (tile_lists.py: alpha sprites and bokeh discs): a disc reaching `radius`
 * pixels from `center`, swept along `stretch` (pixels, head minus tail over
 * the shutter; zero for a round one), at window depth `depth`.  Binning takes
 * its pixel rectangle, blending its coverage of a pixel center: an alpha
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

int sprite_tile_count(SpriteShape shape, vec2 stretch, ivec2 size)
{
  ivec4 tiles = sprite_tile_rect(shape, stretch, size);
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

/* Depth keys of the sprite list are the window depth in 24-bit fixed point (sprites.py: three radix passes,
 * not four): steps of 2^-24 of the depth range, ties kept in list order; hidden sprites sort after all. */
const float DEPTH_KEY_SCALE = 16777215.0;
const uint HIDDEN_KEY = 0xFFFFFFu;

int sprite_linear_index()
{
  return int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256 + int(gl_LocalInvocationIndex);
}
