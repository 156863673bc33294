/* The splat with same-pixel adds aggregated per workgroup first (pixel_table.glsl).
 *
 * Thousands of particles on one pixel serialise on that pixel's atomics.
 * Here each group of 256 x PER_THREAD particles sums its colors per pixel in the shared
 * table (twice as many slots as particles: every add finds one), then one thread per distinct
 * pixel adds the group's total with the same two packed words as splat.glsl.  The accumulation
 * images end up bit-identical to splat.glsl's.  PER_THREAD <= 4 keeps a slot's adds within 1024. */

void main()
{
  table_clear();
  barrier();

  int width = imageSize(pos_age).x;
  /* PER_THREAD particles per invocation, rows PER_THREAD apart: a bigger group
   * sums more same-pixel adds before they reach the images. */
  for (int k = 0; k < PER_THREAD; k++) {
    int particle_slot = (int(gl_WorkGroupID.y) * PER_THREAD + k) * width + int(gl_GlobalInvocationID.x);
    int index;
    vec4 pos_age_in, vel_life_in, clip;
    bool visible = read_visible_particle(particle_slot, index, pos_age_in, vel_life_in, clip);
    float life = vel_life_in.w;
    ivec2 pixel = ivec2(0);
    if (visible) {
      vec3 window = window_coordinates(clip, target_size);
      pixel = min(ivec2(window.xy), target_size - 1);
#ifdef DEPTH_TEST
      /* Same rule as splat.glsl: tile range first, full resolution only inside it. */
      float depth = window.z;
      vec2 tile_range = texelFetch(coarse_depth, pixel / COARSE_TILE, 0).xy;
      visible = !(depth > tile_range.y) &&
                !(depth > tile_range.x && depth > texelFetch(scene_depth, pixel, 0).r);
#endif
    }
    if (visible) {
      vec4 look_now = look_at(div_rn(pos_age_in.w, life));
      float radius_px = particle_radius_px(index, look_now, pixel_scale, clip.w);
      vec3 color = particle_color(index, look_now, pixel_coverage(radius_px));
      uvec3 q = quantize_color(color, quantize_scale);
      table_add(pixel, q, TABLE_SIZE);
    }
  }
  barrier();

  uint overflows = table_flush();
  if (overflows != 0u) {
    imageAtomicAdd(stats, ivec2(STAT_OVERFLOW, 0), overflows);
  }
}
