/* The glint list (glints.py): glint_extract appends, glint_sprites draws.
 * Point i takes two texels of row i / list_width: (rgb, luminance), then
 * (pixel x, pixel y, 0, 0).  GLINT_TILE (the tile each point stands for)
 * comes from glints.TILE. */

ivec2 glint_texel(uint index)
{
  return ivec2(int(index % uint(list_width)) * 2, int(index / uint(list_width)));
}
