/* Tile-binned alpha sprites, step 3: how many 16x16 tiles the j-th nearest
 * sprite touches (its whole rectangle: tile_lists.WHOLE_ROWS), in depth order, so that their scan places every sprite's
 * tile instances in depth order (sprite_instances). */

void main()
{
  int j = sprite_linear_index();
  if (j >= count) {
    return;
  }
  int width = imageSize(depth_sprites).x;
  uint sprite = imageLoad(depth_sprites, particle_texel(j, width)).x;
  ivec2 texel = particle_texel(int(sprite), imageSize(sprite_shapes).x);
  Footprint footprint = load_footprint(texel);
  int tiles = sprite_tile_count(sprite_shape_of(footprint), footprint.streak, target_size);
  imageStore(instance_counts, particle_texel(j, imageSize(instance_counts).x), uvec4(uint(tiles)));
}
