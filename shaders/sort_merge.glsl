/* FUSED_STRIDES long strides of one bitonic merge in one dispatch: each
 * invocation owns the 2^FUSED_STRIDES pairs those strides touch, sorts them in
 * registers, and writes back only what moved.  The first stride of a merge
 * (2 * stride == size) compares mirrored pairs, as in sort_local.glsl.
 *
 * Slots at or beyond count act as (KEY_LAST, KEY_LAST) padding that a swap
 * never moves below count, and are never stored. */

const uint PAD = 0xFFFFFFFFu;
const int N = 1 << FUSED_STRIDES;

void main()
{
  int t = int(gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x + gl_GlobalInvocationID.x);
  if (t >= slots) {
    return;
  }
  int low = stride >> (FUSED_STRIDES - 1);
  /* t with FUSED_STRIDES zero bits inserted at the strides' bit positions. */
  int first = t % low + (t / low) * (low << FUSED_STRIDES);
  int width = imageSize(keys).x;
  int slot[N];
  uint key[N], index[N], loaded[N];
  for (int c = 0; c < N / 2; c++) {
    slot[c] = first + c * low;
    slot[c + N / 2] = 2 * stride == size ? slot[c] ^ (size - 1) : slot[c] + stride;
  }
  for (int x = 0; x < N; x++) {
    bool real = slot[x] < count;
    ivec2 texel = particle_texel(slot[x], width);
    key[x] = real ? imageLoad(keys, texel).x : PAD;
    index[x] = real ? imageLoad(indices, texel).x : PAD;
    loaded[x] = index[x];
  }
  for (int r = 0; r < FUSED_STRIDES; r++) {
    int distance = N >> (r + 1);
    for (int x = 0; x < N; x++) {
      if ((x & distance) == 0) {
        int y = x + distance;
        bool swap = slot[x] < slot[y] ? key[x] > key[y] : key[y] > key[x];
        if (swap) {
          uint k = key[x], i = index[x];
          key[x] = key[y];
          index[x] = index[y];
          key[y] = k;
          index[y] = i;
        }
      }
    }
  }
  for (int x = 0; x < N; x++) {
    if (slot[x] < count && index[x] != loaded[x]) {
      ivec2 texel = particle_texel(slot[x], width);
      imageStore(keys, texel, uvec4(key[x]));
      imageStore(indices, texel, uvec4(index[x]));
    }
  }
}
