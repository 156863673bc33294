/* Splats each live particle's extinction cross-section (extinction_scale *
 * pi r^2: density times shadow density, shadow_volume.py) into the shadow
 * volume's density levels: trilinearly over the 8 voxels around its center
 * in the level whose voxel matches its size (LEVEL_PER_RADIUS voxels of
 * level 0 per radius), shared between the two levels around a fractional
 * one, so the density moves and grows smoothly with the particle.  Sums are
 * fixed point (DENSITY_SCALE units per optical depth across one voxel edge of
 * the grid) with imageAtomicAdd on an R32UI 3D image: no float atomics in
 * GLSL 4.3, and integer sums do not depend on the order the adds land in
 * (bakes are byte-identical).  One add is at most MAX_PARTICLE_DEPTH (an
 * opaque voxel already), so 1e6 particles at that limit in one voxel still fit
 * in 32 bits; rounding is dithered by a fixed hash of (slot, corner), so
 * particles far below one unit still add up to the right density. */

void splat_level(int slot, vec3 center, vec4 grid, int level, float depth)
{
  int resolution = imageSize(shadow_density_sum).x;
  int size = level_size(resolution, level);
  int start = level_start(resolution, level);
  float scale = float(1 << level);
  precise float level_depth = min(depth / (scale * scale * scale), MAX_PARTICLE_DEPTH);
  vec3 cells = grid_coordinates(center, grid) / scale - 0.5;
  vec3 base = floor(cells);
  vec3 fraction = cells - base;
  for (int corner = 0; corner < 8; corner++) {
    ivec3 offset = ivec3(corner & 1, (corner >> 1) & 1, corner >> 2);
    ivec3 voxel = clamp(ivec3(base) + offset, ivec3(0), ivec3(size - 1));
    vec3 weights = mix(1.0 - fraction, fraction, vec3(offset));
    precise float units = level_depth * (weights.x * weights.y * weights.z) * DENSITY_SCALE
                          + random_unit(uint(slot), uint(corner + 8 * level), DITHER_STREAM);
    if (units >= 1.0) {
      imageAtomicAdd(shadow_density_sum, voxel + ivec3(0, 0, start), uint(units));
    }
  }
}

void main()
{
  int slot = particle_index(imageSize(pos_age).x);
  vec3 center;
  float radius;
  vec4 grid = shadow_grid_placement();
  if (!(grid.w > 0.0) || !shadow_particle(slot, center, radius)) {
    return;
  }
  precise float depth = extinction_scale * PI * radius * radius / (grid.w * grid.w);
  if (!(depth > 0.0) || isinf(depth)) {
    return;
  }
  int last = level_count(imageSize(shadow_density_sum).x) - 1;
  float level = clamp(log2(max(radius * LEVEL_PER_RADIUS / grid.w, 1.0)), 0.0, float(last));
  int below = min(int(level), last);
  float upper_share = level - float(below);
  splat_level(slot, center, grid, below, depth * (1.0 - upper_share));
  if (upper_share > 0.0) {
    splat_level(slot, center, grid, below + 1, depth * upper_share);
  }
}
