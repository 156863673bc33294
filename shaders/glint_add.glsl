/* Adds the glint layer to the frame: light, so alpha (the sprites' coverage)
 * stays as it is. */

void main()
{
  ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
  if (any(greaterThanEqual(pixel, target_size))) {
    return;
  }
  vec4 color = imageLoad(frame, pixel);
  color.rgb += texelFetch(glints, pixel, 0).rgb;
  imageStore(frame, pixel, color);
}
