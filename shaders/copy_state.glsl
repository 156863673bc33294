/* Copies both particle state images texel for texel: a timeline checkpoint
 * kept on the GPU, taken and restored without a readback. */

void main()
{
  ivec2 texel = ivec2(gl_GlobalInvocationID.xy);
  if (any(greaterThanEqual(texel, imageSize(pos_age)))) {
    return;
  }
  imageStore(copy_pos_age, texel, imageLoad(pos_age, texel));
  imageStore(copy_vel_life, texel, imageLoad(vel_life, texel));
}
