/* Keep-flag of every particle slot: 1 while it is alive (born, not expired,
 * finite: the test the splat makes), 0 otherwise.  Scanned by compaction.py. */

void main()
{
  int index;
  ivec2 texel;
  if (!particle_slot(imageSize(pos_age).x, count, index, texel)) {
    return;
  }
  vec4 pos_age_in = imageLoad(pos_age, texel);
  float life = imageLoad(vel_life, texel).w;
  bool live = pos_age_in.w >= 0.0 && pos_age_in.w < life && is_finite(pos_age_in.xyz);
  imageStore(keep, texel, uvec4(live ? 1u : 0u));
}
