/* Counts the live particles (born, not expired, finite position) of one
 * effect into a single R32UI texel for the Stats panel. Each work group sums
 * in shared memory first, so one atomic per group reaches the hot texel. */

void main()
{
  if (gl_LocalInvocationIndex == 0u) {
    group_alive[0] = 0u;
  }
  barrier();
  int width = imageSize(pos_age).x;
  int index = particle_index(width);
  if (index < count) {
    ivec2 texel = particle_texel(index, width);
    vec4 pos_age_in = imageLoad(pos_age, texel);
    float life = imageLoad(vel_life, texel).w;
    if (pos_age_in.w >= 0.0 && pos_age_in.w < life && is_finite(pos_age_in.xyz)) {
      atomicAdd(group_alive[0], 1u);
    }
  }
  barrier();
  if (gl_LocalInvocationIndex == 0u && group_alive[0] != 0u) {
    imageAtomicAdd(alive, ivec2(0, 0), group_alive[0]);
  }
}
