/* Copies a trail ring and its heads texel for texel (a checkpoint kept on the
 * GPU, trails.py); dispatched over the ring, which is at least the heads' size. */

void main()
{
  ivec2 texel = ivec2(gl_GlobalInvocationID.xy);
  if (any(greaterThanEqual(texel, imageSize(trail_points)))) {
    return;
  }
  imageStore(copy_points, texel, imageLoad(trail_points, texel));
  if (all(lessThan(texel, imageSize(trail_heads)))) {
    imageStore(copy_heads, texel, imageLoad(trail_heads, texel));
  }
}
