/* The child's ring cursor (events.py), one invocation: moved past this substep's births (at most `count`),
 * or with advance 0 copied as it is (checkpoints on the GPU). */

void main()
{
  uint cursor = imageLoad(spawn_cursor, ivec2(0)).x;
  uint births = advance != 0 ? min(imageLoad(spawn_total, ivec2(0)).x, uint(count)) : 0u;
  imageStore(next_cursor, ivec2(0), uvec4((cursor + births) % uint(count)));
}
