/* The additive tile walk (tile_lists.py), shared by bokeh_accumulate.glsl, quad_accumulate.glsl and trail_accumulate.glsl: one
 * workgroup per 16x16 tile, one thread per pixel, sums the tile's footprints into `layer`, each pixel read
 * and written once, without atomics; the sum starts from what the layer holds and adds the footprints in
 * list order (the binning is stable): the rasterizer's blending order, and the same result every run.
 * BLOCK_WALK: a block's pixels visit only the footprints that reach it (tile_list.glsl); those it skips would
 * have added exactly 0 (the walks give the same bits).  TILE_SLICES: a long list is summed by several
 * workgroups (gl_WorkGroupID.z the slice), each its run of chunks from 0 into tile_partials (tile_slices.glsl);
 * the layer is not read here (tile_combine.glsl adds the partial sums to it). */

/* `sum` plus chunk entry k's footprint at pixel p (nothing where it misses p or is hidden there): defined
 * by the kernel. */
vec3 add_footprint(vec3 sum, int k, TilePixel p);

#ifdef BLOCK_WALK
/* `sum` plus the footprint of the lowest bit of `bits` (word `word` of the block's), which it clears; `sum`
 * when none is left. */
vec3 add_next(vec3 sum, int word, inout uint bits, TilePixel p)
{
  if (bits != 0u) {
    sum = add_footprint(sum, word * 32 + findLSB(bits), p);
    bits &= bits - 1u;
  }
  return sum;
}
#endif

/* The entries [x, y) of a list of n that this workgroup sums: all, or with TILE_SLICES its slice's. */
ivec2 slice_entries(int n)
{
#ifdef TILE_SLICES
  int first = int(gl_WorkGroupID.z) * slice_length(n);
  return ivec2(min(first, n), min(first + slice_length(n), n));
#else
  return ivec2(0, n);
#endif
}

void sum_tile()
{
  int t = int(gl_LocalInvocationIndex);
  ivec2 list = tile_list();
  int n = list.y;
  ivec2 entries = slice_entries(n);
  if (entries.x == entries.y) {
    return; /* uniform over the workgroup: no barrier is skipped by some threads only; most slices end here */
  }
  TilePixel p = tile_pixel();
#ifdef TILE_SLICES
  vec3 sum = vec3(0.0);
#else
  vec4 held = p.inside ? imageLoad(layer, p.pixel) : vec4(0.0);
  vec3 sum = held.rgb;
#endif
  for (int chunk = entries.x; chunk < entries.y; chunk += TILE_CHUNK) {
    share_tile_chunk(list, chunk, t);
    /* Four entries an iteration: llvmpipe ends a shader's loops after 65535 iterations in all (Mesa's
     * LP_MAX_TGSI_LOOP_ITERATIONS), which cut a tile's sum short beyond about 65,000 discs (a quarter of an
     * extreme depth of field's light). */
#ifdef BLOCK_WALK
    /* Only the entries that reach this thread's block, in list order. */
    int words = block_words();
    for (int word = 0; word < CHUNK_WORDS; word++) {
      for (uint bits = s_block_bits[words + word]; bits != 0u;) {
        sum = add_next(sum, word, bits, p);
        sum = add_next(sum, word, bits, p);
        sum = add_next(sum, word, bits, p);
        sum = add_next(sum, word, bits, p);
      }
    }
#else
    int m = min(TILE_CHUNK, n - chunk);
    for (int k = 0; k < m; k += 4) { /* past the list the spans are 0: those add nothing */
      sum = add_footprint(sum, k, p);
      sum = add_footprint(sum, k + 1, p);
      sum = add_footprint(sum, k + 2, p);
      sum = add_footprint(sum, k + 3, p);
    }
#endif
    barrier();
  }
#ifdef TILE_SLICES
  imageStore(tile_partials, partial_texel(tile_index(), int(gl_WorkGroupID.z), tile_local_pixel()), vec4(sum, 0.0));
#else
  if (p.inside) {
    imageStore(layer, p.pixel, vec4(sum, held.a)); /* additive: coverage (alpha) unchanged */
  }
#endif
}
