/* Long tile lists split over TILE_SLICES workgroups (tile_lists.TileSlices): slice s of a tile sums its s-th
 * run of whole chunks (tile_sum.glsl) from 0 into its own partial sums (tile_partials, float32), which
 * tile_combine.glsl adds to what the layer holds in slice order: a dense tile no longer serializes on one
 * workgroup.  The same sums as one workgroup's walk but for their grouping (the layer's value joins the
 * slices' sums, not the first footprint's), the same result every run.  Only tile_combine reads the layer, as an image: no kernel samples what the
 * frame's earlier dispatches stored (a texture fetch after image stores needs a barrier the host may not
 * issue). */

/* Entries of a list of n that each slice sums: whole chunks, the fewest that spread its chunks over
 * TILE_SLICES. */
int slice_length(int n)
{
  int chunks = (n + TILE_CHUNK - 1) / TILE_CHUNK;
  return (chunks + TILE_SLICES - 1) / TILE_SLICES * TILE_CHUNK;
}

/* Slices that sum part of a list of n: 1 up to TILE_CHUNK entries, at most TILE_SLICES. */
int slices_used(int n)
{
  int length = slice_length(n);
  return n == 0 ? 0 : (n + length - 1) / length;
}

/* Where tile `tile`'s slice `slice` keeps its partial sum of the tile's pixel `local`: 16x16 blocks, block
 * tile * TILE_SLICES + slice, row by row. */
ivec2 partial_texel(int tile, int slice, ivec2 local)
{
  int block = tile * TILE_SLICES + slice;
  int per_row = imageSize(tile_partials).x / SPRITE_TILE;
  return ivec2(block % per_row, block / per_row) * SPRITE_TILE + local;
}
