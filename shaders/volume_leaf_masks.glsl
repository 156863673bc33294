/* One grid's leaves for the file, first pass (volume_grids.py): every leaf
 * of the box (a workgroup) writes, at its element (the grid's first plus its
 * rank in the tree's order, volume_leaf.glsl), its value mask (the voxels
 * whose halves are not +-0; MASK_WORDS words, bit i: voxel i), the bytes of
 * its buffer in the file (LEAF_HEADER_BYTES of mask and metadata byte plus
 * its active voxels' halves; 0 for a leaf with none, which the file leaves
 * out) to leaf_sizes and whether it has any (1 or 0) to the element as many
 * after (leaf_sizes holds the sizes of every grid's leaves, then their
 * flags): one scan turns them into each buffer's byte offset and each
 * leaf's index in the file (after the total of the bytes).  leaf_tally
 * holds the grid's leaves, bytes and the bounds of its active voxels (the
 * file's metadata; atomic adds and maxima of integers: the same in any
 * order). */

/* A VDB index as a uint in the same order (the sign bit flipped); a minimum
 * is kept as the maximum of the complement, so images cleared to 0 start
 * empty. */
uvec3 ordered(ivec3 index)
{
  return uvec3(index) ^ uvec3(0x80000000u);
}

void main()
{
  uint local = gl_LocalInvocationIndex;
  if (local < uint(MASK_WORDS)) {
    s_mask[local] = 0u;
  }
  if (local < 6u) {
    s_bounds[local] = 0u;
  }
  barrier();
  ivec3 row = leaf_row();
  uint row_bits = 0u; /* the row's byte of the mask, bit z */
  for (int z = 0; z < LEAF; z++) {
    row_bits |= is_active(voxel_halves(row + ivec3(0, 0, z))) ? 1u << z : 0u;
  }
  atomicOr(s_mask[local >> 2u], row_bits << (8u * (local & 3u)));
  if (row_bits != 0u) {
    ivec3 index = first_leaf * LEAF + row;
    uvec3 lowest = ~ordered(index + ivec3(0, 0, findLSB(row_bits)));
    uvec3 highest = ordered(index + ivec3(0, 0, findMSB(row_bits)));
    for (int axis = 0; axis < 3; axis++) {
      atomicMax(s_bounds[axis], lowest[axis]);
      atomicMax(s_bounds[3 + axis], highest[axis]);
    }
  }
  barrier();
  int element = leaf_element();
  if (local < uint(MASK_WORDS)) {
    imageStore(leaf_masks, mask_texel(element, int(local)), uvec4(s_mask[local]));
  }
  if (local == 0u) {
    uint count = 0u;
    for (int word = 0; word < MASK_WORDS; word++) {
      count += uint(bitCount(s_mask[word]));
    }
    uint size = count > 0u ? uint(LEAF_HEADER_BYTES) + 2u * uint(LANES) * count : 0u;
    int width = imageSize(leaf_sizes).x;
    imageStore(leaf_sizes, particle_texel(element, width), uvec4(size));
    imageStore(leaf_sizes, particle_texel(element + box_elements, width), uvec4(count > 0u ? 1u : 0u));
    if (count > 0u) {
      imageAtomicAdd(leaf_tally, ivec2(TALLY * GRID, 0), 1u);
      imageAtomicAdd(leaf_tally, ivec2(TALLY * GRID + 1, 0), size);
      for (int bound = 0; bound < 6; bound++) {
        imageAtomicMax(leaf_tally, ivec2(TALLY * GRID + 2 + bound, 0), s_bounds[bound]);
      }
    }
  }
}
