/* A tile-binned compositor's per-tile walk (tile_lists.py): one workgroup per
 * 16x16 tile reads its tile's list of footprints (binned_sprites, from
 * tile_offsets and tile_counts) into shared memory (s_shapes, s_streaks,
 * s_colors, in the form the kernel's own share_footprint prepares for its
 * inner loop), TILE_CHUNK (a define) at a time (share_tile_chunk), each with
 * the rows and columns of the tile its pixel rectangle spans as two 16-bit
 * masks (s_spans), so a pixel skips a footprint that cannot cover it with
 * one test.  With BLOCK_WALK (a variant, tile_lists.WALKS), each group of 32
 * threads (one warp on NVIDIA) takes an 8x4 block of the tile and gets a bit
 * set per footprint whose capsule reaches the block (block_reach: each
 * entry's blocks in s_blocks, gathered into s_block_bits), so its threads
 * visit only those, in list order (block_words), instead of testing every
 * footprint of the chunk.  Needs those images, the footprint's (records.FOOTPRINT) and target_size;
 * SPRITE_TEXTURE: sprite_frames, the sprite list's entry (records.SPRITE_ENTRY) through share_frames
 * (SPRITE_RELIEF: sprite_lights through share_lights); QUAD_AXES: quad_axes
 * through share_axes; TRAIL_END: trail_ends and the footprint's end_depths through share_trail_end. */

/* Entry t of the chunk into s_shapes, s_streaks and s_colors: defined by the kernel, which knows what
 * its walk needs of a footprint (sprite_blend.glsl, bokeh_accumulate.glsl). */
void share_footprint(int t, Footprint footprint);
#ifdef SPRITE_TEXTURE
/* Entry t's sheet pose into shared memory: defined by the kernel (sprite_blend.glsl). */
void share_frames(int t, SpriteEntry entry);
#endif
#ifdef SPRITE_RELIEF
/* Entry t's light in its frame into shared memory: defined by the kernel (sprite_blend.glsl). */
void share_lights(int t, SpriteEntry entry);
#endif
#ifdef QUAD_AXES
/* Entry t's quad frame (records.QUAD_AXES) into shared memory: defined by the kernel (quad_accumulate.glsl). */
void share_axes(int t, QuadAxes axes);
#endif
#ifdef TRAIL_END
/* Entry t's far end (records.TRAIL_END) and its ends' depths (end_depths) into shared memory: defined by
 * the kernel (trail_accumulate.glsl). */
void share_trail_end(int t, TrailEnd end, vec2 depths);
#endif

#ifdef BLOCK_WALK
const int CHUNK_WORDS = TILE_CHUNK / 32; /* words of one block's bits in s_block_bits */

/* The rows (high half) and the columns (low half) of block b's pixels, as span masks: blocks of 8x4,
 * two a row of blocks (a small footprint reaches fewer of those than of 16x2 row pairs, a walk
 * measured 18% slower). */
uvec2 block_masks(int b)
{
  return uvec2(0xFu << (16u + 4u * uint(b >> 1)), 0xFFu << (8u * uint(b & 1)));
}

/* The blocks (bit b: block_masks(b)) of the tile at `origin` that a footprint may reach: those its `spans`
 * reach with a pixel centre its capsule may cover (path_reach_x, as sprite_row_tiles takes it), so a
 * diagonal streak skips the blocks of its rectangle it passes by. */
uint block_reach(SpriteShape shape, vec2 streak, uint spans, ivec2 origin)
{
  float reach = shape.radius + reach_margin(shape, streak);
  uint blocks = 0u;
  for (int b = 0; b < SPRITE_TILE * SPRITE_TILE / 32; b += 2) {
    float top = float(origin.y + 2 * b) + 0.5;
    vec2 x = path_reach_x(shape, streak, reach, top, top + 3.0) - (float(origin.x) + 0.5);
    for (int column = 0; column < 2; column++) {
      uvec2 masks = block_masks(b + column);
      bool spanned = (spans & masks.x) != 0u && (spans & masks.y) != 0u;
      bool met = x.x <= x.y && x.x <= float(8 * column + 7) && x.y >= float(8 * column);
      blocks |= spanned && met ? 1u << uint(b + column) : 0u;
    }
  }
  return blocks;
}
#endif

/* This thread's pixel within the tile: thread t at (t % 16, t / 16), or with BLOCK_WALK, thread t of
 * block t / 32 (block_masks). */
ivec2 tile_local_pixel()
{
#ifdef BLOCK_WALK
  uint t = gl_LocalInvocationIndex;
  uint block = t >> 5u;
  return ivec2((block & 1u) * 8u + (t & 7u), (block >> 1u) * 4u + ((t >> 3u) & 3u));
#else
  return ivec2(gl_LocalInvocationID.xy);
#endif
}

/* Bits first..last (tile-relative, clamped to the tile) of a 16-bit mask; 0 when they miss the tile. */
uint tile_span_mask(int first, int last)
{
  int low = max(first, 0);
  int high = min(last, SPRITE_TILE - 1);
  return high < low ? 0u : ((2u << uint(high)) - (1u << uint(low)));
}

/* A pixel of the tile as a span: its row's bit in the high half, its column's in the low. */
uint tile_pixel_bits(ivec2 local)
{
  return (1u << (16u + uint(local.y))) | (1u << uint(local.x));
}

/* Whether a footprint's spans hold the pixel of ``pixel_bits``. */
bool tile_spans(uint spans, uint pixel_bits)
{
  return (spans & pixel_bits) == pixel_bits;
}

/* This workgroup's tile, row by row. */
int tile_index()
{
  return int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
}

/* This workgroup's tile list: (first entry, entries). */
ivec2 tile_list()
{
  ivec2 texel = particle_texel(tile_index(), imageSize(tile_offsets).x);
  return ivec2(imageLoad(tile_offsets, texel).x, imageLoad(tile_counts, texel).x);
}

/* This thread's pixel of the workgroup's tile, and what the walk tests it against. */
struct TilePixel {
  ivec2 pixel;
  bool inside;  /* in the target (edge tiles overhang it) */
  float scene;  /* the scene's depth there (SPRITE_DEPTH_TEST), else 1: nothing hides a footprint */
  uint bits;    /* tile_pixel_bits() */
  vec2 at;      /* the pixel's centre */
};

TilePixel tile_pixel()
{
  TilePixel p;
  ivec2 local = tile_local_pixel();
  p.pixel = ivec2(gl_WorkGroupID.xy) * SPRITE_TILE + local;
  p.inside = all(lessThan(p.pixel, target_size));
  p.scene = 1.0;
#ifdef SPRITE_DEPTH_TEST
  p.scene = p.inside ? texelFetch(scene_depth, p.pixel, 0).r : 0.0;
#endif
  p.bits = tile_pixel_bits(local);
  p.at = vec2(p.pixel) + 0.5;
  return p;
}

/* Chunk `chunk` of the list into shared memory (s_shapes, s_streaks, s_colors, s_spans; s_blocks and
 * s_block_bits with BLOCK_WALK), thread t its entry t (s_spans 0 past the list); visible to the whole
 * workgroup on return.  Uniform control flow (barriers); the caller's barrier after walking a chunk keeps the
 * next one from overwriting it early.  (Loading the next chunk while walking this one was measured no
 * faster on the H100: the walk is the cost.) */
void share_tile_chunk(ivec2 list, int chunk, int t)
{
  uint spans = 0u, blocks = 0u;
  if (chunk + t < list.y) {
    uint item = imageLoad(binned_sprites, particle_texel(list.x + chunk + t, imageSize(binned_sprites).x)).x;
    ivec2 texel = particle_texel(int(item), imageSize(sprite_shapes).x);
#ifdef SPRITE_TEXTURE
    SpriteEntry entry = load_sprite_entry(texel); /* the footprint, the sprite's pose (and its light) */
    Footprint footprint = footprint_of(entry);
#else
    Footprint footprint = load_footprint(texel);
#endif
    SpriteShape shape = sprite_shape_of(footprint);
    vec2 streak = footprint.streak;
    share_footprint(t, footprint);
#ifdef SPRITE_TEXTURE
    share_frames(t, entry);
#endif
#ifdef SPRITE_RELIEF
    share_lights(t, entry);
#endif
#ifdef QUAD_AXES
    share_axes(t, load_quad_axes(texel));
#endif
#ifdef TRAIL_END
    share_trail_end(t, load_trail_end(texel), footprint.end_depths);
#endif
    ivec2 origin = ivec2(gl_WorkGroupID.xy) * SPRITE_TILE;
    ivec4 rect = sprite_pixel_rect(shape, streak, target_size) - origin.xyxy;
    spans = tile_span_mask(rect.y, rect.w) << 16u | tile_span_mask(rect.x, rect.z);
#ifdef BLOCK_WALK
    blocks = block_reach(shape, streak, spans, origin);
#endif
  }
  s_spans[t] = spans; /* 0 past the list: it reaches no pixel */
#ifdef BLOCK_WALK
  s_blocks[t] = blocks;
#endif
  barrier(); /* the chunk is shared */
#ifdef BLOCK_WALK
  /* Thread t < 64 gathers one word: block t / CHUNK_WORDS, entries 32 * (t % CHUNK_WORDS) on.  (One
   * shared atomicOr per entry and block instead: every lane of a warp hits the same word.) */
  if (t < SPRITE_TILE * SPRITE_TILE / 32 * CHUNK_WORDS) {
    uint block = uint(t / CHUNK_WORDS);
    int first = 32 * (t % CHUNK_WORDS);
    uint word = 0u;
    for (int j = 0; j < 32; j++) {
      word |= ((s_blocks[first + j] >> block) & 1u) << uint(j);
    }
    s_block_bits[t] = word;
  }
  barrier();
#endif
}

#ifdef BLOCK_WALK
/* This thread's block's first word in s_block_bits: bit j of word w says whether entry 32 w + j of the
 * chunk reaches the block, so the block visits those only, in list order (sprite_blend.glsl).  Each
 * visit is one loop iteration: llvmpipe (Mesa's software GL) stops every loop of an invocation once all
 * of them together went round 65,535 times (gallivm's LP_MAX_TGSI_LOOP_ITERATIONS), and a walk that also
 * entered a loop per visit (to skip empty words) left tiles of 40,000 sprites empty there. */
int block_words()
{
  return int(gl_LocalInvocationIndex >> 5u) * CHUNK_WORDS;
}
#endif
