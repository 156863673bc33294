/* Copies a spawned effect's per-slot tint texel for texel (simulation.py): its part of a timeline checkpoint
 * kept on the GPU, as copy_state.glsl copies the state. */

void main()
{
  ivec2 texel = ivec2(gl_GlobalInvocationID.xy);
  if (any(greaterThanEqual(texel, imageSize(particle_tint)))) {
    return;
  }
  imageStore(copy_tint, texel, imageLoad(particle_tint, texel));
}
