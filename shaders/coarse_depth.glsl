/* The scene depth's range per 16x16 tile, in one dispatch: one group per
 * tile, one texel per thread, a shared-memory min/max tree.
 *
 * The splat culls a particle when it is farther than the tile's MAX depth
 * (behind every surface of the tile: conservative, never hides a visible
 * particle) and keeps it without a full-resolution read when it is nearer
 * than the tile's MIN depth. */

void main()
{
  ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
  uint local = gl_LocalInvocationIndex;
  bool inside = all(lessThan(pixel, target_size));
  float depth = inside ? texelFetch(scene_depth, pixel, 0).r : 0.0;
  /* Texels past the target's edge take no part: neutral for min and max. */
  tile_min[local] = inside ? depth : 1.0;
  tile_max[local] = inside ? depth : 0.0;
  barrier();
  for (uint stride = 128u; stride > 0u; stride >>= 1u) {
    if (local < stride) {
      tile_min[local] = min(tile_min[local], tile_min[local + stride]);
      tile_max[local] = max(tile_max[local], tile_max[local + stride]);
    }
    barrier();
  }
  if (local == 0u) {
    imageStore(coarse_depth, ivec2(gl_WorkGroupID.xy), vec4(tile_min[0], tile_max[0], 0.0, 0.0));
  }
}
