/* Key of every (key, index) pair from the particle its index points at.
 * reset_indices != 0 starts from the identity permutation (index i = slot i). */

void main()
{
  int slot;
  ivec2 texel;
  if (!particle_slot(imageSize(keys).x, count, slot, texel)) {
    return;
  }
  uint index = reset_indices != 0 ? uint(slot) : imageLoad(indices, texel).x;
  ivec2 source = particle_texel(int(index), imageSize(pos_age).x);
  uint key = particle_key(load_particle(source));
  imageStore(keys, texel, uvec4(key));
  imageStore(indices, texel, uvec4(index));
}
