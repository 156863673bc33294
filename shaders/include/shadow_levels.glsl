/* The density's levels (shadow_volume.py): level L has voxels 2^L times the
 * grid's edge, ceil(resolution / 2^L) a side, down to MIN_LEVEL_SIZE; all are
 * stacked along z in one R32UI 3D image, level L from z = level_start(L). */

int level_size(int resolution, int level)
{
  return (resolution + (1 << level) - 1) >> level;
}

int level_count(int resolution)
{
  int count = 1;
  while (level_size(resolution, count) >= MIN_LEVEL_SIZE) {
    count++;
  }
  return count;
}

int level_start(int resolution, int level)
{
  int start = 0;
  for (int below = 0; below < level; below++) {
    start += level_size(resolution, below);
  }
  return start;
}
