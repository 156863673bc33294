/* A tile-binned compositor's per-tile walk (tile_lists.py): one workgroup per
 * 16x16 tile reads its tile's list of footprints (binned_sprites, from
 * tile_offsets and tile_counts) into shared memory (s_shapes, s_streaks,
 * s_colors), TILE_CHUNK (a define) at a time.  Needs those images, sprite_shapes,
 * sprite_streaks and sprite_colors. */

/* This workgroup's tile list: (first entry, entries). */
ivec2 tile_list()
{
  int tile = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
  ivec2 texel = particle_texel(tile, imageSize(tile_offsets).x);
  return ivec2(imageLoad(tile_offsets, texel).x, imageLoad(tile_counts, texel).x);
}

/* Thread t's footprint of the chunk starting at entry `chunk` of the list into shared memory
 * (the caller's barrier() then makes the chunk visible). */
void load_tile_chunk(ivec2 list, int chunk, int t)
{
  if (chunk + t < list.y) {
    uint item = imageLoad(binned_sprites, particle_texel(list.x + chunk + t, imageSize(binned_sprites).x)).x;
    ivec2 texel = particle_texel(int(item), imageSize(sprite_shapes).x);
    s_shapes[t] = imageLoad(sprite_shapes, texel);
    s_streaks[t] = imageLoad(sprite_streaks, texel).xy;
    s_colors[t] = imageLoad(sprite_colors, texel);
  }
}
