/* The glint list (glints.py): glint_extract writes, glint_sprites draws.
 * Slot i (tile i of the frame, row by row) takes two texels of row
 * i / list_width: (rgb, luminance; zero luminance: no point), then
 * (pixel x, pixel y, 0, 0).  GLINT_TILE (the tile each point stands for)
 * comes from glints.TILE. */

ivec2 glint_texel(uint index)
{
  return ivec2(int(index % uint(list_width)) * 2, int(index / uint(list_width)));
}
