/* Adds every live particle into the one pixel it projects to, with two
 * independent integer atomics per particle (see color_pack.glsl).
 *
 * Cull in clip space before the divide; the color is scaled by the particle's
 * projected disc area in pixels (particle_look.glsl); HDR color becomes
 * integers by Imax / Emax.  With DEPTH_TEST, particles behind the scene's
 * opaque geometry are dropped: the 16x16-tile depth range decides most of
 * them, the full-resolution depth only the ones inside a tile's range. */

void main()
{
  int index;
  Particle particle;
  vec4 clip;
  if (!read_visible_particle(invocation_slot(), index, particle, clip)) {
    return;
  }
  vec3 window = window_coordinates(clip, target_size);
  ivec2 pixel = min(ivec2(window.xy), target_size - 1);

#ifdef DEPTH_TEST
  float depth = window.z;
  vec2 tile_range = texelFetch(coarse_depth, pixel / COARSE_TILE, 0).xy;
  if (depth > tile_range.y) {
    return; /* behind the farthest surface of the tile */
  }
  if (depth > tile_range.x && depth > texelFetch(scene_depth, pixel, 0).r) {
    return;
  }
#endif

  vec4 look_now = particle_look(particle, div_rn(particle.age, particle.life));
  float radius_px = particle_radius_px(index, look_now, pixel_scale, clip.w);
  vec3 color = particle_color(index, look_now, pixel_coverage(radius_px));
  uvec3 q = quantize_color(color, quantize_scale);

  uint overflows = accum_add_color(pixel, q);
  if (overflows != 0u) {
    imageAtomicAdd(stats, ivec2(STAT_OVERFLOW, 0), overflows);
  }
}
