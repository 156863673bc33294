/* The finished frame as an 8-bit PNG holds it, converted on the GPU: the
 * scene's view transform, look, exposure and gamma (display_transform(), the
 * OpenColorIO function placed before this file), then quantized as the CPU
 * path does (frame_writer.quantize: clamp, x * 255 + 0.5, truncate) and
 * packed R | G << 8 | B << 16 | A << 24, so the words read back byte for byte
 * as RGBA8 (a quarter of the bytes of a float readback).  The frame is
 * premultiplied linear RGBA; with STRAIGHT_ALPHA (the file has alpha) the
 * color is divided by alpha where alpha is not 0, as PNG's straight alpha
 * wants (frame_writer.display_pixels).  Rows are written top first, the
 * order the file stores them. */

uint quantized(float value)
{
  precise float scaled = value * 255.0;
  precise float rounded = scaled + 0.5;
  return uint(clamp(rounded, 0.0, 255.0));
}

void main()
{
  ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
  if (any(greaterThanEqual(pixel, target_size))) {
    return;
  }
  vec4 color = imageLoad(frame, pixel);
#ifdef STRAIGHT_ALPHA
  if (color.a != 0.0) {
    color.rgb /= color.a;
  }
#endif
  vec4 display = display_transform(color);
  uint rgba8 = quantized(display.r) | (quantized(display.g) << 8) | (quantized(display.b) << 16) |
                (quantized(display.a) << 24);
  imageStore(target, ivec2(pixel.x, target_size.y - 1 - pixel.y), uvec4(rgba8));
}
