/* Keep-flag of every sample after the primitives [first, last) changed.
 *   mode A   (samples kept so far, i < count): culled inside any new primitive;
 *   mode B.1 (new samples of an additive primitive k): kept outside the solid
 *            of the primitives before k;
 *   mode B.2 (new samples of a subtractive primitive k): kept only inside it,
 *            where they cut an existing shape;
 * and a new sample inside a later new primitive is culled as in mode A. */

void main()
{
  int index;
  ivec2 texel;
  if (!particle_slot(imageSize(sample_pos).x, bound, index, texel)) {
    return;
  }
  int kept_before = int(imageLoad(sample_count, ivec2(0)).x);
  int added = (last - first) * samples_per_primitive;
  bool keep = false;
  if (index < kept_before) {
    keep = !inside_any(first, last, imageLoad(sample_pos, texel).xyz);
  }
  else if (index < kept_before + added) {
    vec4 p = imageLoad(sample_pos, texel);
    int k = int(p.w);
    keep = inside_stack(k, p.xyz) == primitive_subtracts(load_csg_primitive(k)) && !inside_any(k + 1, last, p.xyz);
  }
  imageStore(keep_flags, texel, uvec4(keep ? 1u : 0u));
}
