/* The finished frame as a PNG stores it, converted on the GPU: the scene's
 * view transform, look, exposure and gamma (display_transform(), the
 * OpenColorIO function placed before this file), quantized as the CPU path
 * does (frame_writer.quantize: clamp, x * top + 0.5, truncate; top is 255
 * or 65535 for FILE_BYTES 1 or 2), rows top first.  The frame is
 * premultiplied linear RGBA; with FILE_CHANNELS 4 the file has straight
 * alpha, so the color is divided by alpha where alpha is not 0
 * (frame_writer.display_pixels); with 3 alpha is dropped.
 *
 * An invocation converts four pixels of a row into FILE_CHANNELS *
 * FILE_BYTES words holding the file's values in order (R G B [A] R G B ...),
 * 8-bit values four to a word, 16-bit two, low first: read back on a
 * little-endian host the words are the row's values.  A row is
 * FILE_CHANNELS * FILE_BYTES * width bytes in whole words; the bytes past
 * its end are not read. */

#define PIXEL_VALUES (4 * FILE_CHANNELS)
#define QUAD_WORDS (FILE_CHANNELS * FILE_BYTES)

uint quantized(float value)
{
  const float top = FILE_BYTES == 2 ? 65535.0 : 255.0;
  precise float scaled = value * top;
  precise float rounded = scaled + 0.5;
  return uint(clamp(rounded, 0.0, top));
}

/* The pixel's display color, straight where the file has alpha. */
vec4 display_color(ivec2 pixel)
{
  vec4 color = imageLoad(frame, pixel);
#if FILE_CHANNELS == 4
  if (color.a != 0.0) {
    color.rgb /= color.a;
  }
#endif
  return display_transform(color);
}

void main()
{
  ivec2 quad = ivec2(gl_GlobalInvocationID.xy);
  if (4 * quad.x >= frame_width || quad.y >= frame_height) {
    return;
  }
  uint values[PIXEL_VALUES];
  for (int i = 0; i < 4; i++) {
    /* Past the row's end: its last pixel again, into bytes nobody reads. */
    vec4 color = display_color(ivec2(min(4 * quad.x + i, frame_width - 1), quad.y));
    for (int c = 0; c < FILE_CHANNELS; c++) {
      values[FILE_CHANNELS * i + c] = quantized(color[c]);
    }
  }
  int row_words = (FILE_CHANNELS * FILE_BYTES * frame_width + 3) / 4;
  int row = frame_height - 1 - quad.y;
  for (int k = 0; k < QUAD_WORDS && QUAD_WORDS * quad.x + k < row_words; k++) {
#if FILE_BYTES == 2
    uint word = values[2 * k] | (values[2 * k + 1] << 16);
#else
    uint word = values[4 * k] | (values[4 * k + 1] << 8) | (values[4 * k + 2] << 16) | (values[4 * k + 3] << 24);
#endif
    imageStore(target, ivec2(QUAD_WORDS * quad.x + k, row), uvec4(word));
  }
}
