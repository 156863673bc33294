/* The finished frame as an 8-bit PNG stores it, converted on the GPU: the
 * scene's view transform, look, exposure and gamma (display_transform(), the
 * OpenColorIO function placed before this file), then quantized as the CPU
 * path does (frame_writer.quantize: clamp, x * 255 + 0.5, truncate), rows
 * top first.  The frame is premultiplied linear RGBA.
 *
 * STRAIGHT_ALPHA (RGBA files): the color is divided by alpha where alpha is
 * not 0, as PNG's straight alpha wants (frame_writer.display_pixels), and
 * each pixel is one word R | G << 8 | B << 16 | A << 24.  Otherwise (RGB
 * files) an invocation converts four pixels of a row into three words, the
 * bytes R G B R G B ... as the file stores them: a row is 3 * width bytes
 * in ceil(3 * width / 4) words, the bytes past 3 * width unused.  Either way
 * the words read back little-endian are the file's bytes. */

uint quantized(float value)
{
  precise float scaled = value * 255.0;
  precise float rounded = scaled + 0.5;
  return uint(clamp(rounded, 0.0, 255.0));
}

/* The pixel's display color as four bytes R, G, B, A. */
uvec4 display_bytes(ivec2 pixel)
{
  vec4 color = imageLoad(frame, pixel);
#ifdef STRAIGHT_ALPHA
  if (color.a != 0.0) {
    color.rgb /= color.a;
  }
#endif
  vec4 display = display_transform(color);
  return uvec4(quantized(display.r), quantized(display.g), quantized(display.b), quantized(display.a));
}

uint word_of(uvec4 bytes)
{
  return bytes.x | (bytes.y << 8) | (bytes.z << 16) | (bytes.w << 24);
}

void main()
{
  ivec2 cell = ivec2(gl_GlobalInvocationID.xy);
  int row = frame_height - 1 - cell.y;
#ifdef STRAIGHT_ALPHA
  if (any(greaterThanEqual(cell, frame_size))) {
    return;
  }
  imageStore(target, ivec2(cell.x, row), uvec4(word_of(display_bytes(cell))));
#else
  if (4 * cell.x >= frame_width || cell.y >= frame_height) {
    return;
  }
  uint rgb[12];
  for (int i = 0; i < 4; i++) {
    /* Past the row's end: its last pixel again, into bytes nobody reads. */
    uvec4 bytes = display_bytes(ivec2(min(4 * cell.x + i, frame_width - 1), cell.y));
    rgb[3 * i] = bytes.r;
    rgb[3 * i + 1] = bytes.g;
    rgb[3 * i + 2] = bytes.b;
  }
  int words = (3 * frame_width + 3) / 4;
  for (int k = 0; k < 3 && 3 * cell.x + k < words; k++) {
    uvec4 bytes = uvec4(rgb[4 * k], rgb[4 * k + 1], rgb[4 * k + 2], rgb[4 * k + 3]);
    imageStore(target, ivec2(3 * cell.x + k, row), uvec4(word_of(bytes)));
  }
#endif
}
