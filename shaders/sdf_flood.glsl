/* One jump-flooding step: each voxel keeps, of its own nearest triangle and
 * those of the 26 voxels `jump` away, the one nearest its centre (exact
 * distances; ties to the lower id, as the narrow band breaks them). */

void main()
{
  ivec3 voxel = ivec3(gl_GlobalInvocationID);
  ivec3 size = imageSize(flood_from);
  if (any(greaterThanEqual(voxel, size))) {
    return;
  }
  vec3 centre = vec3(voxel);
  uint best = imageLoad(flood_from, voxel).x;
  float best_distance2 = best == SDF_NO_TRIANGLE ? 3.4e38 : sdf_distance2_to(centre, int(best));
  for (int n = 0; n < 27; n++) {
    ivec3 other = voxel + (ivec3(n % 3, (n / 3) % 3, n / 9) - 1) * jump;
    if (n == 13 || any(lessThan(other, ivec3(0))) || any(greaterThanEqual(other, size))) {
      continue;
    }
    uint candidate = imageLoad(flood_from, other).x;
    if (candidate == SDF_NO_TRIANGLE || candidate == best) {
      continue;
    }
    float distance2 = sdf_distance2_to(centre, int(candidate));
    if (distance2 < best_distance2 || (distance2 == best_distance2 && candidate < best)) {
      best = candidate;
      best_distance2 = distance2;
    }
  }
  imageStore(flood_to, voxel, uvec4(best));
}
