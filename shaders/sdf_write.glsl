/* The signed distance of each voxel into its collider's part of the atlas:
 * the exact distance to the nearest triangle jump flooding found, in world
 * units, negative where the axes that voted say inside, a tie included
 * (sdf_winding: columns that are not closed abstain; engine/sdf.py says why a
 * tie is inside and no vote outside). */

void main()
{
  ivec3 voxel = ivec3(gl_GlobalInvocationID);
  ivec3 size = imageSize(sdf_nearest);
  if (any(greaterThanEqual(voxel, size))) {
    return;
  }
  uint nearest = imageLoad(sdf_nearest, voxel).x;
  float distance = sqrt(sdf_distance2_to(vec3(voxel), int(nearest))) * voxel_size;
  uint votes = imageLoad(sdf_winding, voxel).x;
  int inside = 0, outside = 0;
  for (int axis = 0; axis < 3; axis++) {
    uint vote = (votes >> uint(SDF_AXIS_BITS * axis)) & ((1u << uint(SDF_AXIS_BITS)) - 1u);
    inside += int(vote == SDF_VOTE_INSIDE);
    outside += int(vote == 0u);
  }
  bool is_inside = inside > 0 && inside >= outside;
  imageStore(sdf_atlas, voxel + ivec3(0, 0, z_offset), vec4(is_inside ? -distance : distance));
}
