/* Applies a sorted permutation to the particle state: slot i of the sorted
 * copy takes the particle indices[i] points at. */

void main()
{
  int width = imageSize(pos_age).x;
  int slot;
  ivec2 texel;
  if (!particle_slot(width, count, slot, texel)) {
    return;
  }
  ivec2 source = particle_texel(int(imageLoad(indices, texel).x), width);
  imageStore(sorted_pos_age, texel, imageLoad(pos_age, source));
  imageStore(sorted_vel_life, texel, imageLoad(vel_life, source));
}
