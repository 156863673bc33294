/* The trail ring buffer (addon/engine/simulate/trails.py): point j of particle ``index``
 * sits at the particle's state texel plus (j % tiles_x, j / tiles_x) state
 * sizes; ``state_size``: the heads' size (the state images'). */
ivec2 trail_texel(int index, int point, ivec2 state_size)
{
  int across = int(tiles_x);
  return particle_texel(index, state_size.x) + ivec2(point % across, point / across) * state_size;
}
