/* One grid's leaves for the file, first pass (volume_grids.py): every leaf
 * of the box (a workgroup) writes, at its element (the grid's first plus its
 * rank in the tree's order, volume_leaf.glsl), its value mask (the voxels
 * whose halves are not +-0; MASK_WORDS words, bit i: voxel i), the bytes of
 * its buffer in the file (LEAF_HEADER_BYTES of mask and metadata byte plus
 * its active voxels' halves; 0 for a leaf with none, which the file leaves
 * out) to leaf_sizes and whether it has any to leaf_flags: the two scans
 * turn them into each buffer's byte offset and each leaf's index in the
 * file.  leaf_tally counts the grid's leaves and bytes (atomic adds of
 * integers: the same totals in any order). */

void main()
{
  uint local = gl_LocalInvocationIndex;
  if (local < uint(MASK_WORDS)) {
    s_mask[local] = 0u;
  }
  barrier();
  if (is_active(voxel_halves(leaf_voxel()))) {
    atomicOr(s_mask[local >> 5u], 1u << (local & 31u));
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
    imageStore(leaf_sizes, particle_texel(element, imageSize(leaf_sizes).x), uvec4(size));
    imageStore(leaf_flags, particle_texel(element, imageSize(leaf_flags).x), uvec4(count > 0u ? 1u : 0u));
    if (count > 0u) {
      imageAtomicAdd(leaf_tally, ivec2(2 * GRID, 0), 1u);
      imageAtomicAdd(leaf_tally, ivec2(2 * GRID + 1, 0), size);
    }
  }
}
