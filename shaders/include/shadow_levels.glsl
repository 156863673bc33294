/* The density's sublevels (shadow_volume.py): level L has voxels 2^L times
 * the grid's edge, ceil(resolution / 2^L) a side, down to MIN_LEVEL_SIZE.
 * Sublevel s holds particles blurred to a standard deviation (spread) of
 * SPREAD / 2 x sqrt(2)^s voxels of level 0: half an octave apart, so a
 * particle shared between two neighbours keeps close to a Gaussian.  Level 0
 * holds sublevels 0 to 3 (spread 0.6 to 1.7 of its voxels), level L > 0
 * sublevels 2L + 2 and 2L + 3 (SPREAD and SPREAD x sqrt(2) of its voxels).
 * All are stacked along z in one 3D image, sublevel s from
 * z = sublevel_start(s). */

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

int sublevel_level(int sublevel)
{
  return max(sublevel - 2, 0) >> 1;
}

int sublevel_count(int resolution)
{
  return 2 * level_count(resolution) + 2;
}

int sublevel_start(int resolution, int sublevel)
{
  int start = 0;
  for (int below = 0; below < sublevel; below++) {
    start += level_size(resolution, sublevel_level(below));
  }
  return start;
}

/* The blur's standard deviation in voxels of sublevel s's level, such that the
 * trilinear splat (variance 1/6), this blur, the trilinear read back at level-0
 * voxel centers (1/6 above level 0) and the march's trilinear sampling (1/6
 * of a level-0 voxel) add up to the particle's spread. */
float sublevel_blur(int sublevel)
{
  int level = sublevel_level(sublevel);
  float spread = 0.5 * SPREAD * exp2(0.5 * float(sublevel) - float(level));
  float variance = spread * spread - 1.0 / 6.0 - (level > 0 ? 1.0 / 6.0 : 0.0) - 1.0 / (6.0 * float(1 << (2 * level)));
  return sqrt(max(variance, 0.0));
}
