/* Shared by volume_leaf_masks and volume_leaf_bytes (volume_grids.py): one
 * grid's voxels as the halves the file stores, which of them are active, and
 * where a leaf goes in the file.  A workgroup is one 8^3 leaf of the grid's
 * box, thread t (of LEAF_ROWS) its row of voxels along z at x = t / 8,
 * y = t % 8: offsets 8t .. 8t + 7 in VDB's order (x * 64 + y * 8 + z), byte
 * t of the leaf's value mask (512-thread workgroups, a voxel a thread, were
 * 2-6x slower on llvmpipe, which runs a workgroup's threads as coroutines);
 * grid_values holds LANES lanes (density 1, emission and velocity 3). */

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

/* The first voxel (z = 0) of this thread's row of the workgroup's leaf. */
ivec3 leaf_row()
{
  uint local = gl_LocalInvocationIndex;
  return ivec3(gl_WorkGroupID) * LEAF + ivec3(local >> 3u, local & 7u, 0);
}

/* The voxel's lanes as halves (lanes past LANES 0). */
uvec3 voxel_halves(ivec3 voxel)
{
  vec4 value = imageLoad(grid_values, voxel);
#if LANES == 1
  return uvec3(half_bits(value.x), 0u, 0u);
#else
  return uvec3(half_bits(value.x), half_bits(value.y), half_bits(value.z));
#endif
}

/* Active: a lane's half is not +-0 (vdb_file.py: a float below half the smallest half is inactive). */
bool is_active(uvec3 halves)
{
  return any(notEqual(halves & uvec3(0x7FFFu), uvec3(0u)));
}

/* The box's leaves (box_leaves a side from VDB leaf first_leaf) in the tree's
 * order, each leaf's rank: by upper node (512 leaves a side), then lower node
 * (16), then leaf, each by x, y, z; the leaves before it counted axis by axis
 * (every count is a product of per-axis counts of box leaves in a range).
 * The shifts floor negative leaf coordinates (GLSL's >> keeps the sign). */
int tree_rank(ivec3 leaf)
{
  ivec3 first = first_leaf;
  ivec3 end = first_leaf + box_leaves;
  ivec3 upper = (leaf >> 9) << 9;
  ivec3 lower = (leaf >> 4) << 4;
  ivec3 before_upper = upper - min(upper, first);  /* box leaves in the upper nodes before */
  ivec3 in_upper = min(upper + 512, end) - max(upper, first);
  ivec3 before_lower = lower - min(lower, max(upper, first)); /* in its upper node's lower nodes before */
  ivec3 in_lower = min(lower + 16, end) - max(lower, first);
  ivec3 before_leaf = leaf - max(lower, first);
  ivec3 n = box_leaves;
  return before_upper.x * n.y * n.z + in_upper.x * before_upper.y * n.z + in_upper.x * in_upper.y * before_upper.z
         + before_lower.x * in_upper.y * in_upper.z + in_lower.x * before_lower.y * in_upper.z
         + in_lower.x * in_lower.y * before_lower.z
         + before_leaf.x * in_lower.y * in_lower.z + before_leaf.y * in_lower.z + before_leaf.z;
}

/* The workgroup's element in the leaf images: its grid's first plus its rank. */
int leaf_element()
{
  return grid_element + tree_rank(first_leaf + ivec3(gl_WorkGroupID));
}

/* Texel of word `word` of `element`'s value mask (MASK_WORDS a leaf, bit i of the leaf's mask: voxel i). */
ivec2 mask_texel(int element, int word)
{
  return particle_texel(element * MASK_WORDS + word, imageSize(leaf_masks).x);
}
