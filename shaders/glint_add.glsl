/* Adds the glint layer to the frame; alpha follows the resolve's rule (the
 * brightest channel, clamped), so glints show where the frame was empty. */

void main()
{
  ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
  if (any(greaterThanEqual(pixel, target_size))) {
    return;
  }
  vec3 glint = texelFetch(glints, pixel, 0).rgb;
  vec4 color = imageLoad(frame, pixel);
  color.rgb += glint;
  color.a = max(color.a, clamp(max(color.r, max(color.g, color.b)), 0.0, 1.0));
  imageStore(frame, pixel, color);
}
