/* Shared helpers: particle indexing over 2D state images. */

/* Particle i lives at texel (i % width, i / width) of every state image. */
ivec2 particle_texel(int index, int width)
{
  return ivec2(index % width, index / width);
}

#if !defined(GPU_VERTEX_SHADER) && !defined(GPU_FRAGMENT_SHADER)
/* Linear particle index of this invocation, dispatched as (width / 256, rows). */
int particle_index(int width)
{
  return int(gl_GlobalInvocationID.y) * width + int(gl_GlobalInvocationID.x);
}
#endif

bool is_finite(vec3 v)
{
  return !any(isnan(v)) && !any(isinf(v));
}
