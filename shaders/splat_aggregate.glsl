/* The splat with same-pixel adds aggregated per workgroup first.
 *
 * Thousands of particles on one pixel serialise on that pixel's atomics.
 * Here each group of 256 x PER_THREAD particles sums its colors per pixel in a shared
 * open-addressing table (full-width R, G, B: 256 x PER_THREAD x 22 bits cannot wrap),
 * then one thread per distinct pixel adds the group's total with the same
 * two packed words as splat.glsl.  The accumulation images end up
 * bit-identical to splat.glsl's; the overflow counter counts overflowing
 * group adds instead of particle adds (zero exactly when splat.glsl's is).
 *
 * The group's G total goes in as (G >> 11) into G_high and (G & 0x7FF) into
 * G_low; its lo add can itself pass 32 bits (B up to 2^29 plus G_low << 21),
 * so that wrap joins the atomic's own wrap as carries into G_high.
 * PER_THREAD <= 4 keeps the table's G sum under 2^32 (1024 x (2^22 - 1)). */

void main()
{
  uint local = gl_LocalInvocationIndex;
  for (uint slot = local; slot < TABLE_SIZE; slot += 256u) {
    table_key[slot] = 0u;
    table_r[slot] = 0u;
    table_g[slot] = 0u;
    table_b[slot] = 0u;
  }
  barrier();

  int width = imageSize(pos_age).x;
  /* PER_THREAD particles per invocation, rows PER_THREAD apart: a bigger group
   * sums more same-pixel adds before they reach the images. */
  for (int k = 0; k < PER_THREAD; k++) {
    int particle_slot = (int(gl_WorkGroupID.y) * PER_THREAD + k) * width + int(gl_GlobalInvocationID.x);
    int index;
    Particle particle;
  vec4 clip;
    bool visible = read_visible_particle(particle_slot, index, particle, clip);
    float life = particle.life;
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
      vec4 look_now = particle_look(particle, div_rn(particle.age, life));
      float radius_px = particle_radius_px(index, look_now, pixel_scale, clip.w);
      vec3 color = particle_color(index, look_now, pixel_coverage(radius_px));
      uvec3 q = quantize_color(color, quantize_scale);
      /* Key: pixel index + 1 (0 marks an empty slot); at most 256 x PER_THREAD of TABLE_SIZE slots fill. */
      uint key = uint(pixel.y * target_size.x + pixel.x) + 1u;
      uint slot = (key * 2654435761u) >> (32u - TABLE_BITS);
      for (;;) {
        uint previous = atomicCompSwap(table_key[slot], 0u, key);
        if (previous == 0u || previous == key) {
          break;
        }
        slot = (slot + 1u) & (TABLE_SIZE - 1u);
      }
      atomicAdd(table_r[slot], q.r);
      atomicAdd(table_g[slot], q.g);
      atomicAdd(table_b[slot], q.b);
    }
  }
  barrier();

  uint overflows = 0u;
  for (uint slot = local; slot < TABLE_SIZE; slot += 256u) {
    uint key = table_key[slot];
    if (key == 0u) {
      continue;
    }
    ivec2 pixel = ivec2(int((key - 1u) % uint(target_size.x)), int((key - 1u) / uint(target_size.x)));
    uint r = table_r[slot], g = table_g[slot], b = table_b[slot];
    uint add_hi = r + ((g >> 11u) << 21u);
    uint add_lo = b + ((g & LOW11) << 21u);
    uint old_hi = accum_add_hi(pixel, add_hi);
    uint old_lo = accum_add_lo(pixel, add_lo);
    overflows += uint((old_hi & LOW21) + r > LOW21) + uint((old_lo & LOW21) + b > LOW21) +
                 uint(old_hi + add_hi < add_hi || (g >> 11u) + ((old_hi >> 21u) & LOW11) > LOW11);
    uint carries = uint(add_lo < b) + uint(old_lo + add_lo < add_lo);
    if (carries != 0u) {
      uint old_carry = accum_add_hi(pixel, carries << 21u);
      overflows += uint(old_carry + (carries << 21u) < old_carry);
    }
  }
  if (overflows != 0u) {
    imageAtomicAdd(stats, ivec2(STAT_OVERFLOW, 0), overflows);
  }
}
