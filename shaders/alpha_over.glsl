/* Lays the alpha-blended sprite layer (premultiplied) over the resolved
 * additive frame: frame = sprites + (1 - sprites.a) * frame. */

void main()
{
  ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
  if (any(greaterThanEqual(pixel, target_size))) {
    return;
  }
  vec4 over = texelFetch(sprites, pixel, 0);
  imageStore(frame, pixel, over + (1.0 - over.a) * imageLoad(frame, pixel));
}
