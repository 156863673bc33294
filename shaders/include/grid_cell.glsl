/* The neighbour grid's cells (neighbours.py): cubes of edge 1 / grid_inverse_cell, hashed into grid_table bins.
 * The cell is floor(position * grid_inverse_cell), unfused and clamped to +-2^30 so the integer cannot wrap;
 * the numpy reference (reference/simulate/neighbours.py) rounds the same float32 product. */

const float GRID_CELL_LIMIT = 1073741824.0;

ivec3 grid_cell(vec3 position)
{
  precise vec3 scaled = position * grid_inverse_cell;
  return ivec3(clamp(floor(scaled), -GRID_CELL_LIMIT, GRID_CELL_LIMIT));
}

/* The hash bin of a cell's row (its y and z; Teschner et al.'s spatial hash, 2003), before x is added. */
uint grid_row_hash(int y, int z)
{
  return (uint(y) * 19349663u) ^ (uint(z) * 83492791u);
}

/* A cell's bin: its row's hash plus x, masked to the table (a power of two), so the cells of a row lie in
 * consecutive bins and three cells side by side are one range of the sorted entries. */
uint grid_hash(ivec3 cell)
{
  return (grid_row_hash(cell.y, cell.z) + uint(cell.x)) & uint(grid_table - 1);
}
