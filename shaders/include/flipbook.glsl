/* Sampling a sprite sheet (sprite_sheets.py): `grid` is (columns, rows, blend,
 * vector strength: sprite_sheets.GRID), frames read left to right, top to
 * bottom (frame 0 top left; the image's first row is its bottom), `uv` in
 * [0, 1]^2 over the sprite's square, `position` from flipbook_position
 * (sprite_pose.glsl).  Bilinear within the sheet, level 0; straight alpha. */

/* Sheet `slot`'s image (or its vector sheet) at `uv` of the whole sheet: defined by the kernel, which knows
 * its samplers (sprite_blend.glsl: one pair a slot; raster_quads.glsl: one pair). */
vec4 sheet_fetch(int slot, bool vectors, vec2 uv);

/* Frame `frame`'s cell on the sheet, in cells (frame 0 top left). */
vec2 flipbook_cell(vec4 grid, int frame)
{
  int columns = int(grid.x);
  return vec2(float(frame % columns), grid.y - 1.0 - float(frame / columns));
}

/* Where `uv` of the frame in `cell` is on the sheet; uv kept within the frame. */
vec2 flipbook_uv(vec4 grid, vec2 cell, vec2 uv)
{
  return (cell + clamp(uv, 0.0, 1.0)) / grid.xy;
}

/* What a sprite's flipbook position picks, once per sprite rather than per pixel: the cells of frame a (xy)
 * and of the next one, b (zw), and how far from a to b (0 with FLIPBOOK_NONE). */
struct FlipbookFrames {
  vec4 cells;
  float mixed;
};

FlipbookFrames flipbook_frames(vec4 grid, float position)
{
  int frames = int(grid.x * grid.y);
  int a = min(int(position), frames - 1);
  float mixed = int(grid.z) == FLIPBOOK_NONE ? 0.0 : position - float(a);
  return FlipbookFrames(vec4(flipbook_cell(grid, a), flipbook_cell(grid, (a + 1) % frames)), mixed);
}

/* Where frames a and b are read on the sheet for `uv` of the sprite: each moved along the vector sheet's motion
 * towards the time between them (FLIPBOOK_MOTION_VECTORS: frame a's uv back by its vector times the fraction,
 * frame b's forward by its vector times the rest; a vector texel's RG is (offset / strength + 1) / 2). */
struct FlipbookUvs {
  vec2 a;
  vec2 b;
};

FlipbookUvs flipbook_uvs(int slot, vec4 grid, FlipbookFrames f, vec2 uv)
{
  vec2 uv_a = uv, uv_b = uv;
  if (int(grid.z) == FLIPBOOK_MOTION_VECTORS) {
    vec2 flow_a = (sheet_fetch(slot, true, flipbook_uv(grid, f.cells.xy, uv)).rg * 2.0 - 1.0) * grid.w;
    vec2 flow_b = (sheet_fetch(slot, true, flipbook_uv(grid, f.cells.zw, uv)).rg * 2.0 - 1.0) * grid.w;
    uv_a -= flow_a * f.mixed;
    uv_b += flow_b * (1.0 - f.mixed);
  }
  return FlipbookUvs(flipbook_uv(grid, f.cells.xy, uv_a), flipbook_uv(grid, f.cells.zw, uv_b));
}

/* The sheet at frame a's place, mixed with frame b's by the fraction (FLIPBOOK_FRAMES). */
vec4 flipbook_sample(int slot, FlipbookUvs at, float mixed)
{
  vec4 texel = sheet_fetch(slot, false, at.a);
  if (mixed > 0.0) {
    texel = mix(texel, sheet_fetch(slot, false, at.b), mixed);
  }
  return texel;
}

/* Frame a at `uv`, mixed with frame b (flipbook_uvs, flipbook_sample). */
vec4 flipbook_texel_of(int slot, vec4 grid, FlipbookFrames f, vec2 uv)
{
  return flipbook_sample(slot, flipbook_uvs(slot, grid, f, uv), f.mixed);
}

#ifdef SPRITE_RELIEF
/* A normals texel's x and y (sprite_sheets.encoded_normals: byte 128 + 127 n). */
vec2 normal_of(vec4 texel)
{
  return texel.xy * (255.0 / 127.0) - 128.0 / 127.0;
}

/* Sheet `slot`'s normals (sprite_sheets.alpha_normals: the normal's xy) at `uv` of the whole sheet: defined by
 * the kernel (sprite_blend.glsl: one a slot; raster_quads.glsl: one). */
vec2 sheet_normal_fetch(int slot, vec2 uv);

/* The sheet's normal where flipbook_sample reads its color, mixed the same way. */
vec2 flipbook_normal(int slot, FlipbookUvs at, float mixed)
{
  vec2 normal = sheet_normal_fetch(slot, at.a);
  if (mixed > 0.0) {
    normal = mix(normal, sheet_normal_fetch(slot, at.b), mixed);
  }
  return normal;
}
#endif

/* The sheet at `uv` for flipbook position `position` (flipbook_frames, then flipbook_texel_of). */
vec4 flipbook_texel(int slot, vec4 grid, float position, vec2 uv)
{
  return flipbook_texel_of(slot, grid, flipbook_frames(grid, position), uv);
}
