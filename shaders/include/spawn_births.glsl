/* The parent slot a spawn kernel's invocation serves (events.py: spawn_events.glsl, spawn_tint.glsl run over
 * the parent's slots) and its births this substep (spawn_births, the scan's input). */

/* False when the invocation's parent slot has no births this substep (or is past the parent's slots). */
bool parent_births(out ivec2 texel, out uint births)
{
  texel = ivec2(gl_GlobalInvocationID.xy);
  int index = texel.y * int(gl_NumWorkGroups.x * gl_WorkGroupSize.x) + texel.x;
  births = index < parent_count ? imageLoad(spawn_births, texel).x : 0u;
  return births != 0u;
}
