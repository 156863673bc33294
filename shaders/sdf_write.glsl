/* The signed distance of each voxel into its collider's part of the atlas:
 * the exact distance to the nearest triangle jump flooding found, in world
 * units, negative where the axes that voted say inside, a tie included
 * (sdf_winding: columns that are not closed abstain; engine/simulate/sdf.py says why a
 * tie is inside and no vote outside).  An open surface (`surface`): the slab
 * SDF_SURFACE_SHELL voxels thick behind its faces, by the side of that
 * triangle's plane the centre is on (engine/simulate/sdf.py says why). */

void main()
{
  ivec3 voxel = ivec3(gl_GlobalInvocationID);
  ivec3 size = imageSize(sdf_nearest);
  if (any(greaterThanEqual(voxel, size))) {
    return;
  }
  uint nearest = imageLoad(sdf_nearest, voxel).x;
  float voxels = sqrt(sdf_distance2_to(vec3(voxel), int(nearest)));
  if (surface != 0) {
    vec3 a = sdf_corner(int(nearest), 0), b = sdf_corner(int(nearest), 1), c = sdf_corner(int(nearest), 2);
    if (dot(vec3(voxel) - a, cross(b - a, c - a)) < 0.0) {
      voxels = voxels < SDF_SURFACE_SHELL ? -min(voxels, SDF_SURFACE_SHELL - voxels) : voxels - SDF_SURFACE_SHELL;
    }
    imageStore(sdf_atlas, voxel + ivec3(0, 0, z_offset), vec4(voxels * voxel_size));
    return;
  }
  float distance = voxels * voxel_size;
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
