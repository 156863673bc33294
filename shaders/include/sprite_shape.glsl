/* An alpha sprite's screen footprint, shared by the tile-binned compositor's
 * kernels (sprites.py): a soft disc of `radius` pixels around `center`,
 * swept along `stretch` (pixels, head minus tail over the shutter; zero for a
 * round sprite), at window depth `depth`.  Binning takes its pixel rectangle,
 * blending its coverage of a pixel center; a stretched sprite spreads the
 * same energy over its longer streak. */

const int SPRITE_TILE = 16;
const float SPRITE_FALLOFF = 4.0;

/* Pixels whose centers the footprint may cover: (x0, y0, x1, y1), empty when x1 < x0. */
ivec4 sprite_pixel_rect(vec4 shape, vec2 stretch, ivec2 size)
{
  if (!(shape.z > 0.0)) {
    return ivec4(0, 0, -1, -1);
  }
  vec2 reach = abs(stretch) * 0.5 + shape.z;
  vec2 low = floor(shape.xy - reach - 0.5);
  vec2 high = floor(shape.xy + reach - 0.5) + 1.0;
  /* Clamped as floats first: a sprite far off screen must not overflow int. */
  ivec2 first = ivec2(clamp(low, vec2(0.0), vec2(size)));
  ivec2 last = ivec2(clamp(high, vec2(-1.0), vec2(size - 1)));
  return ivec4(first, last);
}

/* The 16x16 tiles under the pixel rectangle: (tx0, ty0, tx1, ty1). */
ivec4 sprite_tile_rect(vec4 shape, vec2 stretch, ivec2 size)
{
  ivec4 pixels = sprite_pixel_rect(shape, stretch, size);
  if (pixels.z < pixels.x || pixels.w < pixels.y) {
    return ivec4(0, 0, -1, -1);
  }
  return pixels / SPRITE_TILE;
}

int sprite_tile_count(vec4 shape, vec2 stretch, ivec2 size)
{
  ivec4 tiles = sprite_tile_rect(shape, stretch, size);
  return max(tiles.z - tiles.x + 1, 0) * max(tiles.w - tiles.y + 1, 0);
}

/* Coverage of the pixel centered at `at`: a Gaussian falloff that reaches zero at the rim. */
float sprite_coverage(vec4 shape, vec2 stretch, vec2 at)
{
  vec2 offset = at - shape.xy;
  float length2 = dot(stretch, stretch);
  float spread = 1.0;
  if (length2 > 0.0) {
    offset -= clamp(dot(offset, stretch) / length2, -0.5, 0.5) * stretch;
    spread = shape.z / (shape.z + 0.5 * sqrt(length2));
  }
  vec2 corner = offset / shape.z;
  float distance2 = dot(corner, corner);
  if (distance2 >= 1.0) {
    return 0.0; /* beyond the rim: most pixels of a tile, without the exp */
  }
  float rim = exp(-SPRITE_FALLOFF);
  return max(0.0, (exp(-SPRITE_FALLOFF * distance2) - rim) / (1.0 - rim)) * spread;
}

int sprite_linear_index()
{
  return int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256 + int(gl_LocalInvocationIndex);
}
