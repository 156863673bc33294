/* Splats each live particle's extinction cross-section (extinction_scale *
 * pi r^2: density times shadow density, shadow_volume.py) into the shadow
 * volume's density sublevels (shadow_levels.glsl): trilinearly over the 8
 * voxels around its center in the sublevel whose blur matches its spread
 * (r / 2), shared between the two sublevels around a
 * fractional one, so the density moves and grows smoothly with the particle.
 * Sums are fixed point (DENSITY_SCALE units per optical depth across one
 * voxel edge of the grid) with imageAtomicAdd on an R32UI 3D image: no float
 * atomics in GLSL 4.3, and integer sums do not depend on the order the adds
 * land in (bakes are byte-identical).  One add is at most MAX_PARTICLE_DEPTH
 * (an opaque voxel already), so 1e6 particles at that limit in one voxel
 * still fit in 32 bits; rounding is dithered by a fixed hash of (slot,
 * corner), so particles far below one unit still add up to the right
 * density. */

void splat_sublevel(int slot, vec3 center, vec4 grid, int sublevel, float depth)
{
  int resolution = imageSize(shadow_density_sum).x;
  int level = sublevel_level(sublevel);
  int size = level_size(resolution, level);
  int start = sublevel_start(resolution, sublevel);
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
                          + random_unit(uint(slot), uint(corner + 8 * sublevel), DITHER_STREAM);
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
  int last = sublevel_count(imageSize(shadow_density_sum).x) - 1;
  float sublevel = clamp(2.0 * log2(max(radius / (SPREAD * grid.w), 1.0)), 0.0, float(last));
  int below = min(int(sublevel), last);
  float upper_share = sublevel - float(below);
  splat_sublevel(slot, center, grid, below, depth * (1.0 - upper_share));
  if (upper_share > 0.0) {
    splat_sublevel(slot, center, grid, below + 1, depth * upper_share);
  }
}
