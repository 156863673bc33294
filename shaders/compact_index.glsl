/* Scatter of the compaction: a kept slot writes its index at its place in the
 * exclusive scan of the keep-flags, so live_index lists the live slots in order. */

void main()
{
  int width = imageSize(keep).x;
  int index = particle_index(width);
  if (index >= count) {
    return;
  }
  ivec2 texel = particle_texel(index, width);
  if (imageLoad(keep, texel).x != 0u) {
    int slot = int(imageLoad(offsets, texel).x);
    imageStore(live_index, particle_texel(slot, imageSize(live_index).x), uvec4(uint(index)));
  }
}
