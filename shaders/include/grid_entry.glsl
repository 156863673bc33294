/* The neighbour grid's entries (neighbours.py): grid_sorted holds the live particles in cell order (position,
 * slot), and grid_offsets' bin grid_table starts after the last live one. */

/* Where hash bin `bin`'s entries start (a bin ends where the next starts). */
int grid_bin_start(int bin)
{
  return int(imageLoad(grid_offsets, particle_texel(bin, imageSize(grid_offsets).x)).x);
}

/* The live entries: where grid_offsets' bin grid_table, past every hash bin, starts. */
int grid_live_entries()
{
  return grid_bin_start(grid_table);
}

/* The opening of a kernel a thread a live entry (in cell order): its entry, texel and grid_sorted texel
 * (position, slot); false past the live entries (grid_offsets' last bin starts after them). */
bool grid_live_entry(out int entry, out ivec2 texel, out vec4 own)
{
  int width = imageSize(grid_sorted).x;
  entry = particle_index(width);
  texel = particle_texel(entry, width);
  own = vec4(0.0);
  if (entry >= grid_live_entries()) {
    return false;
  }
  own = imageLoad(grid_sorted, texel);
  return true;
}
