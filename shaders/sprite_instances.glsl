/* Tile-binned footprints (tile_lists.py): one (tile, item) instance per tile
 * the j-th item touches (sprite_row_tiles, row by row: what sprite_tile_count
 * counted), at its scanned offset, so instances come out in list order and
 * the stable binning by tile keeps that order in every tile's list.  DEPTH_ORDER: the j-th item is the j-th nearest alpha sprite
 * (depth_sprites), otherwise item j itself (additive bokeh discs).  The lists
 * hold `capacity` instances; those past it are dropped (KeptLists grows it),
 * and the binning takes the first min(capacity, total) of them, the total
 * being the scan's, on the GPU. */

void main()
{
  int j = sprite_linear_index();
  int width = imageSize(instance_tiles).x;
  if (j >= count) {
    return;
  }
#ifdef DEPTH_ORDER
  uint sprite = imageLoad(depth_sprites, particle_texel(j, imageSize(depth_sprites).x)).x;
#else
  uint sprite = uint(j);
#endif
  ivec2 texel = particle_texel(int(sprite), imageSize(sprite_shapes).x);
  Footprint footprint = load_footprint(texel);
  SpriteShape shape = sprite_shape_of(footprint);
  vec2 stretch = footprint.streak;
  ivec4 tiles = sprite_tile_rect(shape, stretch, target_size);
  int tiles_x = (target_size.x + SPRITE_TILE - 1) / SPRITE_TILE;
  int next = int(imageLoad(instance_offsets, particle_texel(j, imageSize(instance_offsets).x)).x);
  for (int ty = tiles.y; ty <= tiles.w; ty++) {
    ivec2 columns = sprite_row_tiles(shape, stretch, tiles, ty, target_size);
    for (int tx = columns.x; tx <= columns.y && next < capacity; tx++) {
      ivec2 out_texel = particle_texel(next, width);
      imageStore(instance_tiles, out_texel, uvec4(uint(ty * tiles_x + tx)));
      imageStore(instance_sprites, out_texel, uvec4(sprite));
      next++;
    }
  }
}
