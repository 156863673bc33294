/* Turns the integer accumulation back into linear float color with alpha for
 * compositing, and clears the accumulation for the next frame. */

void main()
{
  ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
  if (any(greaterThanEqual(pixel, target_size))) {
    return;
  }
  uint hi = imageLoad(accum_hi, pixel).x;
  uint lo = imageLoad(accum_lo, pixel).x;
  vec3 color = unpack_color(hi, lo) * dequantize.xyz;
  float alpha = clamp(max(color.r, max(color.g, color.b)), 0.0, 1.0);
  imageStore(frame, pixel, vec4(color, alpha));
  imageStore(accum_hi, pixel, uvec4(0u));
  imageStore(accum_lo, pixel, uvec4(0u));
}
