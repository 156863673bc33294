/* Sort keys as ordered uints: ascending key order is drawing (or lookup) order.
 *
 * Needs the constants key_mode, key_axis (view depth: far first) and key_grid
 * (xyz: grid origin, w: cell size).  Particles that do not show (unborn, dead,
 * non-finite) and NaN keys get KEY_LAST, so they gather at the end. */

const int KEY_DEPTH = 0;
const int KEY_GRID = 1;
const uint KEY_LAST = 0xFFFFFFFFu;
const float GRID_CELLS = 1024.0; /* cells per axis before the grid wraps: 30-bit keys */

/* Monotone map of floats onto uints (negative below positive); NaN sorts last. */
uint ordered_key(float x)
{
  if (isnan(x)) {
    return KEY_LAST;
  }
  uint bits = floatBitsToUint(x);
  return (bits & 0x80000000u) != 0u ? ~bits : bits | 0x80000000u;
}

uint particle_key(vec4 pos_age, float life)
{
  if (!(pos_age.w >= 0.0 && pos_age.w < life) || !is_finite(pos_age.xyz)) {
    return KEY_LAST;
  }
  if (key_mode == KEY_GRID) {
    /* Depth-slice order: z slices of y rows of x cells. */
    uvec3 cell = uvec3(mod(floor((pos_age.xyz - key_grid.xyz) / key_grid.w), GRID_CELLS));
    return (cell.z << 20u) | (cell.y << 10u) | cell.x;
  }
  /* key_axis is the view matrix's z row: view z grows towards the camera. */
  return ordered_key(dot(key_axis.xyz, pos_age.xyz) + key_axis.w);
}
