/* Sampling a sprite sheet (sprite_sheets.py): `grid` is (columns, rows, blend,
 * vector strength: sprite_sheets.GRID), frames read left to right, top to
 * bottom (frame 0 top left; the image's first row is its bottom), `uv` in
 * [0, 1]^2 over the sprite's square, `position` from flipbook_position
 * (sprite_pose.glsl).  Bilinear within the sheet, level 0; straight alpha. */

/* Sheet `slot`'s image (or its vector sheet) at `uv` of the whole sheet: defined by the kernel, which knows
 * its samplers (sprite_blend.glsl: one pair a slot; raster_quads.glsl: one pair). */
vec4 sheet_fetch(int slot, bool vectors, vec2 uv);

/* Where `uv` of frame `frame` is on the sheet; uv kept within the frame. */
vec2 flipbook_uv(vec4 grid, int frame, vec2 uv)
{
  int columns = int(grid.x);
  vec2 cell = vec2(float(frame % columns), grid.y - 1.0 - float(frame / columns));
  return (cell + clamp(uv, 0.0, 1.0)) / grid.xy;
}

/* The frame at `position` (FLIPBOOK_NONE), mixed with the next one by the fraction (FLIPBOOK_FRAMES), each
 * moved along the vector sheet's motion towards the time between them (FLIPBOOK_MOTION_VECTORS: frame a's
 * uv back by its vector times the fraction, frame b's forward by its vector times the rest; a vector texel's
 * RG is (offset / strength + 1) / 2). */
vec4 flipbook_texel(int slot, vec4 grid, float position, vec2 uv)
{
  int frames = int(grid.x * grid.y);
  int a = min(int(position), frames - 1);
  int blend = int(grid.z);
  float mixed = blend == FLIPBOOK_NONE ? 0.0 : position - float(a);
  int b = (a + 1) % frames;
  vec2 uv_a = uv, uv_b = uv;
  if (blend == FLIPBOOK_MOTION_VECTORS) {
    vec2 flow_a = (sheet_fetch(slot, true, flipbook_uv(grid, a, uv)).rg * 2.0 - 1.0) * grid.w;
    vec2 flow_b = (sheet_fetch(slot, true, flipbook_uv(grid, b, uv)).rg * 2.0 - 1.0) * grid.w;
    uv_a -= flow_a * mixed;
    uv_b += flow_b * (1.0 - mixed);
  }
  vec4 texel = sheet_fetch(slot, false, flipbook_uv(grid, a, uv_a));
  if (mixed > 0.0) {
    texel = mix(texel, sheet_fetch(slot, false, flipbook_uv(grid, b, uv_b)), mixed);
  }
  return texel;
}
