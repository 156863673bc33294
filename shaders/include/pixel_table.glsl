/* A workgroup's same-pixel adds summed in shared memory before they reach the accumulation (accum.glsl):
 * thousands of adds on one pixel serialize on its global atomics, a shared table's cost far less.
 *
 * An open-addressing table of TABLE_SIZE slots (table_key: pixel index + 1, 0 empty; table_r, table_g,
 * table_b: full-width sums of quantize_color's channels), cleared by table_clear, filled by table_add, added
 * into the accumulation one thread a filled slot by table_flush (barriers between).  Integer sums: the images
 * end bit-identical to adding every color on its own (accum_add_color), whichever adds went through the table;
 * the overflow count counts overflowing slot adds instead (zero exactly when theirs is).  A slot's sums stay
 * exact while it takes at most 1024 adds (1024 x (2^22 - 1) < 2^32): the kernel bounds the adds per pixel. */

void table_clear()
{
  for (uint slot = gl_LocalInvocationIndex; slot < TABLE_SIZE; slot += gl_WorkGroupSize.x * gl_WorkGroupSize.y) {
    table_key[slot] = 0u;
    table_r[slot] = 0u;
    table_g[slot] = 0u;
    table_b[slot] = 0u;
  }
}

/* Adds q at `pixel` into the table; false (nothing added) when `probes` slots from its hash are all taken by
 * other pixels. */
bool table_add(ivec2 pixel, uvec3 q, uint probes)
{
  uint key = uint(pixel.y * target_size.x + pixel.x) + 1u;
  uint slot = (key * 2654435761u) >> (32u - TABLE_BITS);
  for (uint probe = 0u; probe < probes; probe++) {
    uint previous = atomicCompSwap(table_key[slot], 0u, key);
    if (previous == 0u || previous == key) {
      atomicAdd(table_r[slot], q.r);
      atomicAdd(table_g[slot], q.g);
      atomicAdd(table_b[slot], q.b);
      return true;
    }
    slot = (slot + 1u) & (TABLE_SIZE - 1u);
  }
  return false;
}

/* Adds every filled slot's sums into the accumulation; returns the overflows it caused.
 *
 * A slot's G total goes in as (G >> 11) into G_high and (G & 0x7FF) into G_low (color_pack.glsl); its lo add
 * can itself pass 32 bits (B's sum plus G_low << 21), so that wrap joins the atomic's own wrap as carries
 * into G_high. */
uint table_flush()
{
  uint overflows = 0u;
  for (uint slot = gl_LocalInvocationIndex; slot < TABLE_SIZE; slot += gl_WorkGroupSize.x * gl_WorkGroupSize.y) {
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
  return overflows;
}
