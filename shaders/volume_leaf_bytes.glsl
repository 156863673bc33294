/* One grid's leaves for the file, last pass (volume_grids.py), after
 * volume_leaf_masks and the scan of the sizes and flags (leaf_offsets: each
 * leaf's byte offset in the stream of the packed grids' buffers, and, after
 * them, the total bytes plus its index among the leaves the file holds).
 * A leaf holding an active voxel (a workgroup, a thread a row of 8 voxels
 * along z as in volume_leaf.glsl) writes its record (its mask, its lowest
 * voxel's VDB index, its active voxels: RECORD_WORDS words, for the file's
 * topology) and its buffer as the file stores it: the mask's 64 bytes, a
 * metadata byte (0: inactive values are the background) and its active
 * voxels' halves (offset order, lanes adjacent; a voxel's place among them is
 * the count of mask bits before it).  A buffer starts at any byte: a word of
 * leaf_bytes is written whole by the leaf its first byte belongs to, with the
 * first bytes of the next buffer (always the next leaf's mask: found by a
 * binary search of the offsets) where one starts inside it. */

uint record_byte(int at)
{
  if (at < LEAF_HEADER_BYTES - 1) {
    return (s_mask[at >> 2] >> (8 * (at & 3))) & 0xFFu;
  }
  if (at == LEAF_HEADER_BYTES - 1) {
    return 0u; /* the metadata byte */
  }
  int value = at - LEAF_HEADER_BYTES;
  return (s_half[value >> 1] >> (8 * (value & 1))) & 0xFFu;
}

uint offset_of(int element)
{
  return imageLoad(leaf_offsets, particle_texel(element, imageSize(leaf_offsets).x)).x;
}

/* The first mask word of the next buffer after `element`'s, which starts at `end` (0 past the last): the
 * last element whose offset is at most `end` (those between are empty, at the same offset). */
uint next_mask_word(int element, uint end)
{
  int first = element + 1;
  int count = box_elements - first;
  if (count <= 0) {
    return 0u;
  }
  while (count > 1) {
    int half_count = count / 2;
    if (offset_of(first + half_count) <= end) {
      first += half_count;
      count -= half_count;
    }
    else {
      count = half_count;
    }
  }
  return imageLoad(leaf_masks, mask_texel(first, 0)).x;
}

void main()
{
  uint local = gl_LocalInvocationIndex;
  int element = leaf_element();
  uint size = imageLoad(leaf_sizes, particle_texel(element, imageSize(leaf_sizes).x)).x;
  if (size == 0u) {
    return; /* the whole workgroup: a leaf the file leaves out */
  }
  uint count = (size - uint(LEAF_HEADER_BYTES)) / (2u * uint(LANES));
  if (local < uint(MASK_WORDS)) {
    s_mask[local] = imageLoad(leaf_masks, mask_texel(element, int(local))).x;
  }
  barrier();
  uint word = local >> 2u;
  uint shift = 8u * (local & 3u);
  uint before = uint(bitCount(s_mask[word] & ((1u << shift) - 1u))); /* active voxels before the row */
  for (uint k = 0u; k < word; k++) {
    before += uint(bitCount(s_mask[k]));
  }
  uint row_bits = (s_mask[word] >> shift) & 0xFFu;
  ivec3 row = leaf_row();
  for (int z = 0; z < LEAF; z++) {
    if ((row_bits & (1u << z)) != 0u) {
      uvec3 halves = voxel_halves(row + ivec3(0, 0, z));
      for (int lane = 0; lane < LANES; lane++) {
        s_half[before * uint(LANES) + uint(lane)] = halves[lane];
      }
      before++;
    }
  }
  int index = int(offset_of(element + box_elements) - offset_of(box_elements));
  int record_words = imageSize(leaf_records).x * imageSize(leaf_records).y;
  if (local < uint(RECORD_WORDS) && (index + 1) * RECORD_WORDS <= record_words) {
    ivec3 origin = (first_leaf + ivec3(gl_WorkGroupID)) * LEAF;
    uint value = local < uint(MASK_WORDS) ? s_mask[local] : local < uint(MASK_WORDS + 3) ?
                 uint(origin[local - uint(MASK_WORDS)]) : count;
    imageStore(leaf_records, particle_texel(index * RECORD_WORDS + int(local), imageSize(leaf_records).x),
               uvec4(value));
  }
  barrier();
  uint start = offset_of(element);
  uint end = start + size;
  uint words = uint(imageSize(leaf_bytes).x * imageSize(leaf_bytes).y);
  uint last_word = min((end - 1u) >> 2u, words - 1u); /* past the image: the reader refuses the frame */
  for (uint at_word = ((start + 3u) >> 2u) + local; at_word <= last_word; at_word += uint(LEAF_ROWS)) {
    uint next = 4u * at_word + 4u > end ? next_mask_word(element, end) : 0u;
    uint value = 0u;
    for (uint b = 0u; b < 4u; b++) {
      uint at = 4u * at_word + b;
      value |= (at < end ? record_byte(int(at - start)) : (next >> (8u * (at - end))) & 0xFFu) << (8u * b);
    }
    imageStore(leaf_bytes, particle_texel(int(at_word), imageSize(leaf_bytes).x), uvec4(value));
  }
}
