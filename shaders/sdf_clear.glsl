/* Readies a build's scratch volumes: no distance and no triangle yet, no
 * crossings (one dispatch on either host, where an upload of zeros would
 * cross the bus). */

void main()
{
  ivec3 voxel = ivec3(gl_GlobalInvocationID);
  if (any(greaterThanEqual(voxel, imageSize(sdf_winding)))) {
    return;
  }
  imageStore(sdf_distance, voxel, uvec4(SDF_NO_TRIANGLE));
  imageStore(sdf_nearest, voxel, uvec4(SDF_NO_TRIANGLE));
  imageStore(sdf_winding, voxel, uvec4(0u));
}
