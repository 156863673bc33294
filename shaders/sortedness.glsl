/* How sorted the keys are, counted on the GPU:
 *   counts[0]: adjacent pairs in order (keys[i] <= keys[i + 1])
 *   counts[1], counts[2]: concordant and discordant pairs among `samples`
 *                         random pairs (a sampled Kendall tau; ties count in neither)
 * Counts gather per workgroup in shared memory; one invocation adds them. */

void main()
{
  if (gl_LocalInvocationIndex == 0u) {
    s_counts[0] = 0u;
    s_counts[1] = 0u;
    s_counts[2] = 0u;
  }
  barrier();
  int width = imageSize(keys).x;
  int t = int(gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x + gl_GlobalInvocationID.x);
  if (t + 1 < count) {
    if (imageLoad(keys, particle_texel(t, width)).x <= imageLoad(keys, particle_texel(t + 1, width)).x) {
      atomicAdd(s_counts[0], 1u);
    }
  }
  if (t < samples && count > 1) {
    uint a = pcg_hash(uint(t) ^ pcg_hash(uint(seed))) % uint(count);
    uint b = pcg_hash(uint(t) + 0x9E3779B9u ^ pcg_hash(uint(seed) + 1u)) % uint(count - 1);
    b += uint(b >= a); /* b != a */
    uint key_a = imageLoad(keys, particle_texel(int(min(a, b)), width)).x;
    uint key_b = imageLoad(keys, particle_texel(int(max(a, b)), width)).x;
    if (key_a < key_b) {
      atomicAdd(s_counts[1], 1u);
    }
    else if (key_a > key_b) {
      atomicAdd(s_counts[2], 1u);
    }
  }
  barrier();
  if (gl_LocalInvocationIndex < 3u && s_counts[gl_LocalInvocationIndex] != 0u) {
    imageAtomicAdd(counts, ivec2(int(gl_LocalInvocationIndex), 0), s_counts[gl_LocalInvocationIndex]);
  }
}
