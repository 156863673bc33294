/* The grids' active VDB leaves (8^3 voxels, one workgroup each) packed
 * side by side, so that only they are read back (volume_grids.py): a leaf
 * with any voxel holding density, emission or velocity takes the next slot
 * of leaf_count (an atomic counter: the slots' order varies, the file's
 * writer orders the leaves by place) and writes its place in voxels (xyz)
 * to leaf_list and its 512 voxels in VDB's order (offset x * 64 + y * 8 + z:
 * thread i packs voxel i) as half floats, two to a uint, PACKED_TEXELS
 * texels a voxel, to the slot's span of packed_density_velocity (density,
 * velocity x | velocity y, z) and packed_emission (r, g | b, 0): the halves
 * the file stores, a quarter of the floats' bytes to read back.  Slots past
 * the images' capacity are counted, not written: the reader refuses the
 * frame. */

void main()
{
  uint local = gl_LocalInvocationIndex;
  ivec3 voxel = ivec3(gl_WorkGroupID) * LEAF + ivec3(local >> 6u, (local >> 3u) & 7u, local & 7u);
  if (local == 0u) {
    s_leaf[0] = 0u;
  }
  barrier();
  float density = imageLoad(density_grid, voxel).x;
  vec3 emission = imageLoad(emission_grid, voxel).rgb;
  vec3 velocity = imageLoad(velocity_grid, voxel).xyz;
  bool holds = density != 0.0 || any(notEqual(emission, vec3(0.0))) || any(notEqual(velocity, vec3(0.0)));
  if (holds) {
    atomicOr(s_leaf[0], 1u);
  }
  barrier();
  if (s_leaf[0] == 0u) {
    return; /* the whole workgroup: an empty leaf */
  }
  if (local == 0u) {
    s_leaf[1] = imageAtomicAdd(leaf_count, ivec2(0, 0), 1u);
  }
  barrier();
  int slot = int(s_leaf[1]);
  ivec2 list_size = imageSize(leaf_list);
  if (slot >= list_size.x * list_size.y) {
    return;
  }
  ivec2 row = ivec2(slot % list_size.x, slot / list_size.x);
  if (local == 0u) {
    imageStore(leaf_list, row, vec4(vec3(ivec3(gl_WorkGroupID) * LEAF), 0.0));
  }
  ivec2 texel = ivec2((row.x * LEAF_VOXELS + int(local)) * PACKED_TEXELS, row.y);
  imageStore(packed_density_velocity, texel, uvec4(packHalf2x16(vec2(density, velocity.x))));
  imageStore(packed_density_velocity, texel + ivec2(1, 0), uvec4(packHalf2x16(velocity.yz)));
  imageStore(packed_emission, texel, uvec4(packHalf2x16(emission.rg)));
  imageStore(packed_emission, texel + ivec2(1, 0), uvec4(packHalf2x16(vec2(emission.b, 0.0))));
}
