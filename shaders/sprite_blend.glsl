/* Tile-binned alpha sprites, step 6: one workgroup per 16x16 tile, one thread
 * per pixel, walks the tile's sprites nearest first (the binning kept depth
 * order) and composites them front to back, "under":
 *     color += transmittance * sprite, transmittance *= 1 - sprite alpha,
 * which equals premultiplied "over" back to front, but is exact per pixel
 * and lets a pixel stop once it is opaque.  The sprites come through shared
 * memory TILE_CHUNK at a time with the rows and columns of the tile each
 * spans (tile_list.glsl), so a pixel skips a sprite that cannot cover it with
 * one test (BLOCK_WALK: a warp's 8x4 pixels visit only the sprites that reach
 * them); the tile stops when every pixel is opaque.
 * SPRITE_DEPTH_TEST: a sprite behind the scene's depth at a pixel is hidden
 * there (the rasterized path's LESS_EQUAL test); SOFT_PARTICLES: and fades over
 * the last soft_distance before it (soft_particles.glsl).  SPRITE_TEXTURE
 * (sprite_sheets.sheet_sampling): sprites with a sheet sample it instead of the Gaussian (blend_textured). */

const float OPAQUE_TRANSMITTANCE = 1.0 / 4096.0; /* what is left to see is below 1/4096 */
const float RIM = exp(-SPRITE_FALLOFF);

/* A sprite covers the pixel at distance d from its path (offset_from_path) by
 *     max(0, (exp(-SPRITE_FALLOFF * (d / radius)^2) - RIM) / (1 - RIM)) * spread,
 * a Gaussian reaching zero at the radius, spread = radius / (radius + streak length / 2) keeping a
 * streak's energy that of the round sprite.  The per-sprite terms are worked out once per chunk, not
 * once per pixel: the inverse radius (held in the radius of the shape in s_shapes), the streak over
 * its squared length (s_streaks.zw: zero for a round sprite, so the path term drops out without a
 * branch), and the spread and the rim normalization folded into the color. */
void share_footprint(int t, Footprint footprint)
{
  vec2 streak = footprint.streak;
  float radius = footprint.radius;
  float length2 = dot(streak, streak);
  float spread = length2 > 0.0 ? radius / (radius + 0.5 * sqrt(length2)) : 1.0;
  float inverse_radius = radius > 0.0 ? 1.0 / radius : 0.0;
  s_shapes[t] = sprite_shape_texel(SpriteShape(footprint.center, inverse_radius, footprint.depth));
  s_streaks[t] = vec4(streak, length2 > 0.0 ? streak / length2 : vec2(0.0));
  s_colors[t] = footprint.color * (spread / (1.0 - RIM));
}

#ifdef SPRITE_TEXTURE
/* Sheet `slot`'s image or vectors (sprite_sheets.SHEET_SAMPLERS) at `uv`: a sampler is picked by name. */
vec4 sheet_fetch(int slot, bool vectors, vec2 uv)
{
  if (slot == 0) {
    return vectors ? textureLod(sheet_vectors_0, uv, 0.0) : textureLod(sheet_image_0, uv, 0.0);
  }
  if (slot == 1) {
    return vectors ? textureLod(sheet_vectors_1, uv, 0.0) : textureLod(sheet_image_1, uv, 0.0);
  }
  if (slot == 2) {
    return vectors ? textureLod(sheet_vectors_2, uv, 0.0) : textureLod(sheet_image_2, uv, 0.0);
  }
  return vectors ? textureLod(sheet_vectors_3, uv, 0.0) : textureLod(sheet_image_3, uv, 0.0);
}

#ifdef SPRITE_RELIEF
vec2 sheet_normal_fetch(int slot, vec2 uv)
{
  if (slot == 0) {
    return normal_of(textureLod(sheet_normals_0, uv, 0.0));
  }
  if (slot == 1) {
    return normal_of(textureLod(sheet_normals_1, uv, 0.0));
  }
  if (slot == 2) {
    return normal_of(textureLod(sheet_normals_2, uv, 0.0));
  }
  return normal_of(textureLod(sheet_normals_3, uv, 0.0));
}

/* Entry t's light in its frame times its relief (sprite_sheets.SPRITE_LIGHTS; 0: lit evenly). */
void share_lights(int t, SpriteEntry entry)
{
  s_lights[t] = entry.lights;
}
#endif

/* Entry t's pose, its flipbook frames worked out once for the chunk (flipbook_frames): s_frames[t] is
 * (slot + 1, cos and sin of the angle, the fraction from frame a to b), s_cells[t] the two frames' cells. */
void share_frames(int t, SpriteEntry entry)
{
  vec4 frames = vec4(entry.sheet, entry.turn, entry.flipbook);
  if (frames.x > 0.0) {
    FlipbookFrames f = flipbook_frames(sheet_grids[int(frames.x) - 1], frames.w);
    frames.w = f.mixed;
    s_cells[t] = f.cells;
  }
  s_frames[t] = frames;
}

/* A textured sprite (s_frames[k], s_cells[k]: share_frames) over its square: `corner` is the pixel's offset
 * over the footprint's radius, sheet_reaches[slot] times the square's half side (sprite_sheets.sheet_reach);
 * its texel's alpha shapes it, its color tints the sprite's; SPRITE_RELIEF: shaded by max(0, 1 + n . l), the
 * sheet's normal there and the sprite's light (s_lights[k]). */
void blend_textured(int k, vec2 corner, float fade, inout vec3 color, inout float transmittance)
{
  vec4 frames = s_frames[k];
  int slot = int(frames.x) - 1;
  vec2 local = sheet_reaches[slot] *
               vec2(frames.y * corner.x + frames.z * corner.y, frames.y * corner.y - frames.z * corner.x);
  if (max(abs(local.x), abs(local.y)) < 1.0) {
    FlipbookUvs at = flipbook_uvs(slot, sheet_grids[slot], FlipbookFrames(s_cells[k], frames.w), local * 0.5 + 0.5);
    vec4 texel = flipbook_sample(slot, at, frames.w);
    vec4 sprite = s_colors[k] * ((1.0 - RIM) * texel.a * fade);
#ifdef SPRITE_RELIEF
    sprite.rgb *= max(0.0, 1.0 + dot(flipbook_normal(slot, at, frames.w), s_lights[k]));
#endif
    color += transmittance * sprite.rgb * texel.rgb;
    transmittance *= 1.0 - sprite.a;
  }
}
#endif

/* Sprite k of the shared chunk under what the pixel has so far. */
void blend_under(int k, TilePixel p, inout vec3 color, inout float transmittance)
{
  if (!tile_spans(s_spans[k], p.bits)) {
    return;
  }
  SpriteShape shape = sprite_shape_from(s_shapes[k]);
  if (shape.depth > p.scene) {
    return;
  }
#ifdef SOFT_PARTICLES
  float fade = soft_fade(shape.depth, p.scene);
#else
  const float fade = 1.0;
#endif
  vec4 streak = s_streaks[k];
  vec2 offset = p.at - shape.center;
  offset -= clamp(dot(offset, streak.zw), -0.5, 0.5) * streak.xy; /* to the nearest point of the path */
  vec2 corner = offset * shape.radius; /* the inverse radius here (share_footprint) */
#ifdef SPRITE_TEXTURE
  if (s_frames[k].x > 0.0) {
    blend_textured(k, corner, fade, color, transmittance);
    return;
  }
#endif
  float distance2 = dot(corner, corner);
  if (distance2 < 1.0) {
    vec4 sprite = s_colors[k] * ((exp(-SPRITE_FALLOFF * distance2) - RIM) * fade);
    color += transmittance * sprite.rgb;
    transmittance *= 1.0 - sprite.a;
  }
}

void main()
{
  int t = int(gl_LocalInvocationIndex);
  TilePixel p = tile_pixel();
  ivec2 list = tile_list();
  int n = list.y;
  vec3 color = vec3(0.0);
  float transmittance = 1.0;
  bool open = p.inside;
  for (int chunk = 0; chunk < n; chunk += TILE_CHUNK) {
    if (t == 0) {
      s_open[0] = 0u;
    }
    share_tile_chunk(list, chunk, t);
    if (open) {
#ifdef BLOCK_WALK
      /* Word by word, bit by bit: one loop iteration a sprite visited (llvmpipe ends every loop of an
       * invocation after 65,535 iterations of all of them together: see tile_list.glsl). */
      int words = block_words();
      for (int word = 0; word < CHUNK_WORDS; word++) {
        for (uint bits = s_block_bits[words + word]; bits != 0u; bits &= bits - 1u) {
          blend_under(word * 32 + findLSB(bits), p, color, transmittance);
        }
      }
#else
      int m = min(TILE_CHUNK, n - chunk);
      for (int k = 0; k < m; k++) {
        blend_under(k, p, color, transmittance);
      }
#endif
      open = transmittance >= OPAQUE_TRANSMITTANCE;
      if (open) {
        atomicAdd(s_open[0], 1u);
      }
    }
    barrier();
    bool any_open = s_open[0] != 0u;
    barrier();
    if (!any_open) {
      break;
    }
  }
  if (p.inside) {
    imageStore(layer, p.pixel, vec4(color, 1.0 - transmittance));
  }
}
