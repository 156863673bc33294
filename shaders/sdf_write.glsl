/* The signed distance of each voxel into its collider's part of the atlas:
 * the exact distance to the nearest triangle jump flooding found, in world
 * units, negative where at least two of the three axes' ray parities say
 * inside (sdf_parity: columns that cross an odd number of times abstain). */

void main()
{
  ivec3 voxel = ivec3(gl_GlobalInvocationID);
  ivec3 size = imageSize(sdf_nearest);
  if (any(greaterThanEqual(voxel, size))) {
    return;
  }
  uint nearest = imageLoad(sdf_nearest, voxel).x;
  float distance = sqrt(sdf_distance2_to(vec3(voxel), int(nearest))) * voxel_size;
  uint votes = uint(bitCount(imageLoad(sdf_parity, voxel).x >> uint(SDF_PARITY_SHIFT)));
  imageStore(sdf_atlas, voxel + ivec3(0, 0, z_offset), vec4(votes >= 2u ? -distance : distance));
}
