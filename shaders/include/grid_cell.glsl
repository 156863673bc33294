/* The neighbour grid's cells (neighbours.py): cubes of edge 1 / grid_inverse_cell, hashed into grid_table bins.
 * The cell is floor(position * grid_inverse_cell), unfused and clamped to +-2^30 so the integer cannot wrap;
 * the numpy reference (reference/simulate/neighbours.py) rounds the same float32 product. */

const float GRID_CELL_LIMIT = 1073741824.0;

ivec3 grid_cell(vec3 position)
{
  precise vec3 scaled = position * grid_inverse_cell;
  return ivec3(clamp(floor(scaled), -GRID_CELL_LIMIT, GRID_CELL_LIMIT));
}

/* Teschner et al.'s spatial hash (2003) of a cell, masked to the table (a power of two). */
uint grid_hash(ivec3 cell)
{
  uvec3 c = uvec3(cell);
  return ((c.x * 73856093u) ^ (c.y * 19349663u) ^ (c.z * 83492791u)) & uint(grid_table - 1);
}
