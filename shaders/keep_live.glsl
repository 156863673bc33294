/* Keep-flag of every particle slot: 1 while it is alive (born, not expired,
 * finite: the test the splat makes), 0 otherwise.  Scanned by compaction.py. */

void main()
{
  int width = imageSize(pos_age).x;
  int index = particle_index(width);
  if (index >= count) {
    return;
  }
  ivec2 texel = particle_texel(index, width);
  vec4 pos_age_in = imageLoad(pos_age, texel);
  float life = imageLoad(vel_life, texel).w;
  bool live = pos_age_in.w >= 0.0 && pos_age_in.w < life && is_finite(pos_age_in.xyz);
  imageStore(keep, texel, uvec4(live ? 1u : 0u));
}
