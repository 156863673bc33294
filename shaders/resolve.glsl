/* Turns the integer accumulation back into linear float color, adds what was
 * rasterized this frame (points, sprites, quads), writes premultiplied RGBA
 * with alpha 0 (light covers nothing: "over" adds it whole; alpha-blended
 * sprites bring their coverage: with SPRITES_OVER their layer, premultiplied,
 * goes over it, frame = sprites + (1 - sprites.a) * light), and clears the
 * accumulation for the next frame (the words that are not zero).
 *
 * With MEASURE_PEAK (automatic Emax) it also measures the frame's brightest
 * channel: a shared-memory max over the 16x16 group, then one atomic per
 * group (one hot address taking an atomic per pixel would serialise the
 * whole pass). */

void main()
{
  ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
  uint local = gl_LocalInvocationIndex;
  float peak = 0.0;
  if (all(lessThan(pixel, target_size))) {
    uint hi = imageLoad(ACCUM_HI, ACCUM_HI_TEXEL(pixel)).x;
    uint lo = imageLoad(ACCUM_LO, ACCUM_LO_TEXEL(pixel)).x;
    vec3 accumulated = unpack_color(hi, lo) * dequantize.xyz;
    peak = max(accumulated.r, max(accumulated.g, accumulated.b));
    vec3 color = accumulated;
    if (has_raster != 0) {
      color += texelFetch(raster, pixel, 0).rgb;
    }
    vec4 resolved = vec4(color, 0.0);
#ifdef SPRITES_OVER
    vec4 over = texelFetch(sprites, pixel, 0);
    resolved = over + (1.0 - over.a) * resolved;
#endif
    imageStore(frame, pixel, resolved);
    /* Words no particle touched are zero already: left unwritten, memory the
     * splat left clean (most of a sparse frame's) is only read, not written back. */
    if ((hi | lo) != 0u) {
      imageStore(ACCUM_HI, ACCUM_HI_TEXEL(pixel), uvec4(0u));
      imageStore(ACCUM_LO, ACCUM_LO_TEXEL(pixel), uvec4(0u));
    }
  }
#ifdef MEASURE_PEAK
  /* Non-negative floats order like their bit patterns. */
  group_peak[local] = floatBitsToUint(peak);
  barrier();
  for (uint stride = 128u; stride > 0u; stride >>= 1u) {
    if (local < stride) {
      group_peak[local] = max(group_peak[local], group_peak[local + stride]);
    }
    barrier();
  }
  if (local == 0u && group_peak[0] != 0u) {
    imageAtomicMax(stats, ivec2(STAT_PEAK, 0), group_peak[0]);
  }
#endif
}
