/* Sort keys as ordered uints: ascending key order is drawing (or lookup) order.
 *
 * Needs the constants key_mode (KEY_DEPTH or KEY_GRID), key_axis (view depth:
 * far first; depth_axis, depth_offset), key_grid (grid_origin, cell_size) and
 * key_spawn (spawn_position: where waiting particles will appear, spawn_keyed:
 * 1 to use it), all for positions as stored (sorting.KEY_CONSTANTS).
 * Particles waiting to be (re)born (age < 0, life 0: the simulation's respawn
 * skip) are hidden but keyed at key_spawn, so the sort moves them into place
 * before they show.  Particles that do not show otherwise (dead for good,
 * non-finite) and NaN keys get KEY_LAST, so they gather at the end. */

const uint KEY_LAST = 0xFFFFFFFFu;

/* The 8 bits of v spread to every third bit (bit i -> bit 3i). */
uint spread_bits(uint v)
{
  v = (v * 0x00010001u) & 0xFF0000FFu;
  v = (v * 0x00000101u) & 0x0F00F00Fu;
  v = (v * 0x00000011u) & 0xC30C30C3u;
  return (v * 0x00000005u) & 0x49249249u;
}

/* Monotone map of floats onto uints (negative below positive); NaN sorts last.
 * Zeros and denormals of either sign all map to +0's key: GPUs that flush
 * denormals to zero and GPUs that keep them then give the same key. */
uint ordered_key(float x)
{
  if (isnan(x)) {
    return KEY_LAST;
  }
  uint bits = floatBitsToUint(flush_denormals(x));
  return (bits & 0x80000000u) != 0u ? ~bits : bits | 0x80000000u;
}

uint particle_key(Particle particle)
{
  bool waiting = spawn_keyed != 0.0 && particle.life == 0.0 && particle.age < 0.0;
  vec3 position = flush_denormals(waiting ? spawn_position : particle.position);
  if (!(waiting || (particle.age >= 0.0 && particle.age < particle.life)) || !is_finite(position)) {
    return KEY_LAST;
  }
  switch (key_mode) {
  case KEY_GRID: {
    /* Morton (Z) order of the cells: near in the key is near in space along every axis,
     * at every scale, so any stretch of the sorted particles reads a compact block. */
    precise vec3 offset = position - grid_origin;
    vec3 scaled = vec3(div_rn(offset.x, cell_size), div_rn(offset.y, cell_size), div_rn(offset.z, cell_size));
    uvec3 cell = uvec3(mod(floor(scaled), float(GRID_CELLS))); /* GRID_CELLS: tables.py */
    return (spread_bits(cell.z) << 2u) | (spread_bits(cell.y) << 1u) | spread_bits(cell.x);
  }
  }
  /* KEY_DEPTH: key_axis is the view matrix's z row: view z grows towards the camera. */
  precise float depth = ((depth_axis.x * position.x + depth_axis.y * position.y) + depth_axis.z * position.z) + depth_offset;
  return ordered_key(depth);
}
