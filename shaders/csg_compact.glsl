/* Scatter of the CSG compaction: a kept sample moves to its place in the
 * exclusive scan of the keep-flags, position and attributes together. */

void main()
{
  int width = imageSize(sample_pos).x;
  int index;
  ivec2 texel;
  if (!particle_slot(width, bound, index, texel)) {
    return;
  }
  if (imageLoad(keep_flags, texel).x != 0u) {
    ivec2 slot = particle_texel(int(imageLoad(offsets, texel).x), width);
    imageStore(kept_pos, slot, imageLoad(sample_pos, texel));
    imageStore(kept_attr, slot, imageLoad(sample_attr, texel));
  }
}
