/* Bright points for glints: the brightest pixel of each 8x8 tile of the
 * composited frame whose luminance passes the threshold, in the tile's own
 * slot of the list (an empty tile writes zero luminance there).  The seed
 * appends through an atomic counter; in its order glint_sprites' additive
 * half-float blends of overlapping stars rounded differently from run to
 * run, in tile order they round alike.
 *
 * The four layouts of the seed ("Optimising a Compute Shader") share this
 * body; the defines pick one (glints.py declares them):
 *   TEXELS        texels a thread reads along each axis (1, 2 or 8);
 *   TILE_THREADS  threads per tile along each axis (8 / TEXELS);
 *   SERIAL_SEARCH one thread of the tile searches the shared slots alone,
 *                 else a tree along the rows, then down the first column.
 * The product runs TEXELS 2 (4x4 threads reading 2x2 texels each).
 *
 * "Brightest" is a total order (luminance, then the lower offset in the tile
 * on a tie), so every layout and the numpy reference pick the same pixel.
 * The list's layout and GLINT_TILE: include/glint_list.glsl. */

const int NONE_OFFSET = GLINT_TILE * GLINT_TILE;

struct Candidate {
  vec4 color_lum; /* rgb of the frame, w: luminance */
  int offset;     /* y * 8 + x inside the tile; NONE_OFFSET: no candidate */
};

/* Rec. 709 luminance (Blender's scene linear), in one fixed order: no fused
 * multiply-adds, so every layout and the reference round alike. */
float luminance(vec3 c)
{
  precise float lum = c.r * 0.2126 + c.g * 0.7152 + c.b * 0.0722;
  return lum;
}

bool brighter(Candidate a, Candidate b)
{
  return a.color_lum.w > b.color_lum.w || (a.color_lum.w == b.color_lum.w && a.offset < b.offset);
}

/* The brightest qualifying texel of the TEXELS x TEXELS square at ``origin``. */
Candidate search_square(ivec2 origin)
{
  Candidate best = Candidate(vec4(0.0, 0.0, 0.0, -1.0), NONE_OFFSET);
  for (int y = 0; y < TEXELS; y++) {
    for (int x = 0; x < TEXELS; x++) {
      ivec2 pixel = origin + ivec2(x, y);
      if (any(greaterThanEqual(pixel, target_size))) {
        continue;
      }
      vec3 color = imageLoad(frame, pixel).rgb;
      float lum = luminance(color);
      Candidate here = Candidate(vec4(color, lum), (pixel.y % GLINT_TILE) * GLINT_TILE + pixel.x % GLINT_TILE);
      if (lum > threshold && !isinf(lum) && brighter(here, best)) {
        best = here;
      }
    }
  }
  return best;
}

#if TILE_THREADS > 1
Candidate slot(uint i)
{
  return Candidate(tile_color[i], tile_offset[i]);
}

/* Slot a keeps the brighter of slots a and b. */
void keep_brighter(uint a, uint b)
{
  if (brighter(slot(b), slot(a))) {
    tile_color[a] = tile_color[b];
    tile_offset[a] = tile_offset[b];
  }
}

void sync_group()
{
  memoryBarrierShared();
  barrier();
}
#endif

/* The tile's slot: its point, or zero luminance where none passed the threshold. */
void store_point(Candidate best, ivec2 tile)
{
  ivec2 tiles = (target_size + GLINT_TILE - 1) / GLINT_TILE;
  if (any(greaterThanEqual(tile, tiles))) {
    return; /* a thread of a workgroup past the frame's last tiles */
  }
  ivec2 at = glint_texel(uint(tile.y * tiles.x + tile.x));
  bool found = best.offset != NONE_OFFSET;
  ivec2 pixel = tile * GLINT_TILE + ivec2(best.offset % GLINT_TILE, best.offset / GLINT_TILE);
  imageStore(glint_list, at, found ? best.color_lum : vec4(0.0));
  imageStore(glint_list, at + ivec2(1, 0), vec4(found ? vec2(pixel) : vec2(0.0), 0.0, 0.0));
}

void main()
{
  ivec2 origin = ivec2(gl_GlobalInvocationID.xy) * TEXELS;
  ivec2 tile = origin / GLINT_TILE;
  Candidate best = search_square(origin);
#if TILE_THREADS > 1
  uint lx = gl_LocalInvocationID.x;
  uint ly = gl_LocalInvocationID.y;
  uint me = ly * uint(TILE_THREADS) + lx;
  tile_color[me] = best.color_lum;
  tile_offset[me] = best.offset;
  sync_group();
#ifdef SERIAL_SEARCH
  if (me == 0u) {
    for (uint i = 1u; i < uint(TILE_THREADS * TILE_THREADS); i++) {
      keep_brighter(0u, i);
    }
  }
#else
  /* Along each row: thread x keeps the brighter of x and x + stride / 2. */
  for (uint stride = 2u; stride <= uint(TILE_THREADS); stride *= 2u) {
    if (lx % stride == 0u) {
      keep_brighter(me, me + stride / 2u);
    }
    sync_group();
  }
  /* Then down the first column. */
  for (uint stride = 2u; stride <= uint(TILE_THREADS); stride *= 2u) {
    if (lx == 0u && ly % stride == 0u) {
      keep_brighter(me, me + stride / 2u * uint(TILE_THREADS));
    }
    sync_group();
  }
#endif
  if (me != 0u) {
    return;
  }
  best = slot(0u);
#endif
  store_point(best, tile);
}
