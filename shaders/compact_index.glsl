/* Scatter of the compaction: a kept slot writes its index at its place in the
 * exclusive scan of the keep-flags, so live_index lists the live slots in order. */

void main()
{
  int index;
  ivec2 texel;
  if (!particle_slot(imageSize(keep).x, count, index, texel)) {
    return;
  }
  if (imageLoad(keep, texel).x != 0u) {
    int slot = int(imageLoad(offsets, texel).x);
    imageStore(live_index, particle_texel(slot, imageSize(live_index).x), uvec4(uint(index)));
  }
}
