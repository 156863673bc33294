/* The tests' probe: shadow_transmittance() at the points given, as the light
 * pass calls it (shadow_volume.SAMPLE). */

void main()
{
  ivec2 texel = ivec2(gl_GlobalInvocationID.xy);
  if (texel.y * imageSize(points).x + texel.x >= count || texel.x >= imageSize(points).x) {
    return;
  }
  imageStore(sampled, texel, shadow_transmittance(imageLoad(points, texel).xyz));
}
