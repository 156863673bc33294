/* Narrow band: each workgroup takes one triangle and gives every voxel whose
 * centre lies within one voxel of the triangle's bounding box its exact
 * squared distance.  Stage SDF_STAGE_DISTANCE keeps the least per voxel
 * (imageAtomicMin of the float's bits: they order as the floats do when not
 * negative); stage SDF_STAGE_NEAREST then stores the least id among the
 * triangles at that distance (no 64-bit atomics to do both at once). */

void main()
{
  int triangle = sdf_workgroup_triangle();
  if (triangle >= triangle_count) {
    return;
  }
  vec3 a = sdf_corner(triangle, 0), b = sdf_corner(triangle, 1), c = sdf_corner(triangle, 2);
  ivec3 size = imageSize(sdf_distance);
  ivec3 low = max(ivec3(ceil(min(a, min(b, c)))) - 1, ivec3(0));
  ivec3 high = min(ivec3(floor(max(a, max(b, c)))) + 1, size - 1);
  ivec3 extent = high - low + 1;
  if (any(lessThanEqual(extent, ivec3(0)))) {
    return;
  }
  int voxels = extent.x * extent.y * extent.z;
  for (int v = int(gl_LocalInvocationID.x); v < voxels; v += SDF_BAND_THREADS) {
    ivec3 voxel = low + ivec3(v % extent.x, (v / extent.x) % extent.y, v / (extent.x * extent.y));
    uint bits = floatBitsToUint(sdf_triangle_distance2(vec3(voxel), a, b, c));
    if (stage == SDF_STAGE_DISTANCE) {
      imageAtomicMin(sdf_distance, voxel, bits);
    }
    else if (imageLoad(sdf_distance, voxel).x == bits) {
      imageAtomicMin(sdf_nearest, voxel, uint(triangle));
    }
  }
}
