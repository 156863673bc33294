/* The grids' active VDB leaves (8^3 voxels, one workgroup each) packed
 * side by side, so that only they are read back (volume_grids.py): a leaf
 * with any voxel holding density, emission or velocity takes the next slot
 * of leaf_count (an atomic counter: the slots' order varies, the file's
 * writer orders the leaves by place) and writes its place in voxels (xyz)
 * to leaf_list and its 512 voxels in VDB's order (offset x * 64 + y * 8 + z:
 * thread i packs voxel i) as half floats (half_bits), two to a uint, PACKED_TEXELS
 * texels a voxel, to the slot's span of packed_density_velocity (density,
 * velocity x | velocity y, z) and packed_emission (r, g | b, 0): the halves
 * the file stores, a quarter of the floats' bytes to read back.  Slots past
 * the images' capacity are counted, not written: the reader refuses the
 * frame. */

/* x as IEEE half bits rounded to nearest even, as numpy and OpenVDB round
 * (packHalf2x16 leaves the rounding and half subnormals to the GPU):
 * normal halves rebias the exponent and round the 13 dropped bits, past
 * 65504 is infinity, subnormal ones count 2^-24 units of the significand. */
uint half_bits(float x)
{
  uint bits = floatBitsToUint(x);
  uint sign = (bits >> 16u) & 0x8000u;
  uint magnitude = bits & 0x7FFFFFFFu;
  if (magnitude >= 0x7F800000u) {
    return sign | (magnitude > 0x7F800000u ? 0x7E00u : 0x7C00u); /* NaN, infinity */
  }
  if (magnitude >= 0x477FF000u) {
    return sign | 0x7C00u; /* rounds past the largest half */
  }
  if (magnitude >= 0x38800000u) {
    uint rebiased = magnitude - 0x38000000u;
    return sign | ((rebiased + 0xFFFu + ((rebiased >> 13u) & 1u)) >> 13u);
  }
  if (magnitude < 0x33000000u) {
    return sign; /* at most half the smallest subnormal: zero */
  }
  uint shift = 126u - (magnitude >> 23u); /* 14 .. 24 */
  uint significand = (magnitude & 0x7FFFFFu) | 0x800000u;
  uint units = significand >> shift;
  uint rest = significand & ((1u << shift) - 1u);
  uint tie = 1u << (shift - 1u);
  return sign | (units + ((rest > tie || (rest == tie && (units & 1u) == 1u)) ? 1u : 0u));
}

uint pack_halves(float low, float high)
{
  return half_bits(low) | (half_bits(high) << 16u);
}

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
  imageStore(packed_density_velocity, texel, uvec4(pack_halves(density, velocity.x)));
  imageStore(packed_density_velocity, texel + ivec2(1, 0), uvec4(pack_halves(velocity.y, velocity.z)));
  imageStore(packed_emission, texel, uvec4(pack_halves(emission.r, emission.g)));
  imageStore(packed_emission, texel + ivec2(1, 0), uvec4(pack_halves(emission.b, 0.0)));
}
