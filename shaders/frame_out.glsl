/* Copies the finished frame to a readback target, so that the next frame can
 * be drawn while this one waits to be read, rows top first as files store
 * them (the writer threads then copy nothing).  With HALF_TARGET the target is
 * R32UI and twice as wide: each pixel becomes two words, packHalf2x16(rg) and
 * packHalf2x16(ba), which read back byte for byte as little-endian half
 * floats R, G, B, A (half the bytes of a float readback; what EXR stores). */

void main()
{
  ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
  if (any(greaterThanEqual(pixel, target_size))) {
    return;
  }
  vec4 color = imageLoad(frame, pixel);
  int row = target_size.y - 1 - pixel.y;
#ifdef HALF_TARGET
  imageStore(target, ivec2(2 * pixel.x, row), uvec4(packHalf2x16(color.rg)));
  imageStore(target, ivec2(2 * pixel.x + 1, row), uvec4(packHalf2x16(color.ba)));
#else
  imageStore(target, ivec2(pixel.x, row), color);
#endif
}
