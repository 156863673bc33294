/* Copy bandwidth probe: one vec4 texel in, one out per invocation. */
void main()
{
  ivec2 p = ivec2(gl_GlobalInvocationID.xy);
  if (all(lessThan(p, imageSize(src)))) {
    imageStore(dst, p, imageLoad(src, p));
  }
}
