/* Resolve of the one-word accumulation: unpack, write RGBA, clear. */
void main()
{
  ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
  if (any(greaterThanEqual(pixel, target_size))) {
    return;
  }
  uint i = uint(pixel.y * target_size.x + pixel.x);
  uint64_t v = accum64[i];
  vec3 color = vec3(float(uint(v & 0x1FFFFFul)), float(uint((v >> 21) & 0x3FFFFFul)), float(uint(v >> 43))) *
               dequantize.xyz;
  imageStore(frame, pixel, vec4(color, clamp(max(color.r, max(color.g, color.b)), 0.0, 1.0)));
  accum64[i] = 0ul;
}
