/* Long tile lists, step 2 (tile_lists.TileSlices): one workgroup per 16x16 tile, one thread per pixel, adds
 * the tile's partial sums (tile_slices.glsl) to what `layer` holds, in slice order (the list's, grouped); a tile
 * with an empty list is left alone. */

void main()
{
  int tile = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
  int n = int(imageLoad(tile_counts, particle_texel(tile, imageSize(tile_counts).x)).x);
  ivec2 local = ivec2(gl_LocalInvocationID.xy);
  ivec2 pixel = ivec2(gl_WorkGroupID.xy) * SPRITE_TILE + local;
  if (n == 0 || any(greaterThanEqual(pixel, target_size))) {
    return;
  }
  vec4 held = imageLoad(layer, pixel);
  vec3 sum = held.rgb;
  for (int slice = 0; slice < slices_used(n); slice++) {
    sum += imageLoad(tile_partials, partial_texel(tile, slice, local)).rgb;
  }
  imageStore(layer, pixel, vec4(sum, held.a)); /* additive: coverage (alpha) unchanged */
}
