/* Places the shadow volume around the bounds shadow_bounds.glsl gathered,
 * and empties the bounds for the next frame.  The voxel edge is a power of
 * two (the smallest one whose grid of grid_resolution voxels holds the bounds
 * with a voxel to spare on each side for the trilinear splat), the corner a
 * whole number of voxels: the lattice is fixed in the world while the bounds
 * change, so moving particles see no crawl; it changes only when the voxel
 * doubles or halves. */

float from_ordered_bits(uint code)
{
  return uintBitsToFloat((code & 0x80000000u) != 0u ? code & 0x7FFFFFFFu : ~code);
}

void main()
{
  vec3 lower, upper;
  for (int axis = 0; axis < 3; axis++) {
    lower[axis] = -from_ordered_bits(imageLoad(shadow_bounds, ivec2(BOUND_LOWER + axis, 0)).x);
    upper[axis] = from_ordered_bits(imageLoad(shadow_bounds, ivec2(BOUND_UPPER + axis, 0)).x);
    imageStore(shadow_bounds, ivec2(BOUND_LOWER + axis, 0), uvec4(0u));
    imageStore(shadow_bounds, ivec2(BOUND_UPPER + axis, 0), uvec4(0u));
  }
  vec4 grid = vec4(0.0);
  if (all(lessThanEqual(lower, upper)) && is_finite(lower) && is_finite(upper)) {
    vec3 extent = upper - lower;
    float longest = max(max(extent.x, extent.y), max(extent.z, MIN_VOXEL));
    /* The exponent of the smallest power of two >= longest / (grid_resolution - 3), exactly (no log2). */
    int exponent;
    float mantissa = frexp(longest / float(grid_resolution - 3), exponent);
    float voxel = ldexp(1.0, mantissa == 0.5 ? exponent - 1 : exponent);
    grid = vec4((floor(lower / voxel) - 1.0) * voxel, voxel);
  }
  imageStore(shadow_grid, ivec2(0, 0), grid);
}
