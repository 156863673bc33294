/* Where the shadow volume lies this frame (addon/engine/light/shadow_volume.py):
 * shadow_place.glsl writes texel 0 of the RGBA32F image shadow_grid, the
 * world position of the grid's lowest corner (xyz) and the edge of a voxel
 * (w; 0: no grid this frame, nothing shadowed).  Voxel (i, j, k) is centered
 * at corner + (ijk + 0.5) * voxel; the grid's size is its textures' size. */

vec4 shadow_grid_placement()
{
  return imageLoad(shadow_grid, ivec2(0, 0));
}

/* A world position in voxels from the grid's corner (voxel centers at + 0.5). */
vec3 grid_coordinates(vec3 world, vec4 grid)
{
  precise vec3 cells = (world - grid.xyz) / grid.w;
  return cells;
}
