/* The signed distance of each voxel into its collider's part of the atlas:
 * the exact distance to the nearest triangle jump flooding found, in world
 * units, negative where the axes that voted say inside, a tie included
 * (sdf_parity: columns that cross an odd number of times abstain; engine/sdf.py
 * says why a tie is inside and no vote outside). */

void main()
{
  ivec3 voxel = ivec3(gl_GlobalInvocationID);
  ivec3 size = imageSize(sdf_nearest);
  if (any(greaterThanEqual(voxel, size))) {
    return;
  }
  uint nearest = imageLoad(sdf_nearest, voxel).x;
  float distance = sqrt(sdf_distance2_to(vec3(voxel), int(nearest))) * voxel_size;
  uint bits = imageLoad(sdf_parity, voxel).x;
  int inside = bitCount((bits >> uint(SDF_PARITY_SHIFT)) & 7u);
  int outside = 3 - bitCount((bits >> uint(SDF_ABSTAIN_SHIFT)) & 7u) - inside;
  bool is_inside = inside > 0 && inside >= outside;
  imageStore(sdf_atlas, voxel + ivec3(0, 0, z_offset), vec4(is_inside ? -distance : distance));
}
