/* Splats each live particle into one VDB grid's fixed-point sums
 * (volume_grids.py): trilinearly over the 8 voxels around its center, one
 * imageAtomicAdd per voxel and lane into the R32UI 3D images sum_0 ..
 * sum_<SUMS - 1>.  GRID picks what a particle adds (times its trilinear
 * weight):
 *   GRID_DENSITY:  its cross-section (extinction_scale * pi r^2) over the
 *                  voxel's volume, DENSITY_SCALE units per optical depth
 *                  across a voxel edge, at most MAX_PARTICLE_DEPTH an add;
 *   GRID_EMISSION: its disc (pi r^2) times its HDR color (particle_color),
 *                  the same units and limit per channel;
 *   GRID_VELOCITY: its velocity (VELOCITY_SCALE units per world unit per
 *                  second, at most MAX_VELOCITY_UNITS; two's complement:
 *                  the adds wrap) and its weight
 *                  (WEIGHT_SCALE units), lane 3.
 * Rounding is dithered by a fixed hash of (slot, corner, lane): faint
 * particles still add up to the right sum, the same every run. */

void add_units(ivec3 voxel, int lane, float units)
{
  uint add = uint(int(floor(units)));
  if (add == 0u) {
    return;
  }
  if (lane == 0) {
    imageAtomicAdd(sum_0, voxel, add);
  }
#if SUMS > 1
  if (lane == 1) {
    imageAtomicAdd(sum_1, voxel, add);
  }
  if (lane == 2) {
    imageAtomicAdd(sum_2, voxel, add);
  }
#endif
#if SUMS > 3
  if (lane == 3) {
    imageAtomicAdd(sum_3, voxel, add);
  }
#endif
}

void main()
{
  int slot = particle_index(imageSize(pos_age).x);
  vec3 center;
  float radius;
  if (!shadow_particle(slot, center, radius)) {
    return;
  }
  float voxel_edge = volume_placement.w;
  precise float disc = PI * radius * radius / (voxel_edge * voxel_edge);
  if (!(disc > 0.0)) {
    return; /* no size: in no grid (its velocity neither) */
  }
  vec4 lanes;
#if GRID == GRID_DENSITY
  lanes = vec4(min(extinction_scale * disc, MAX_PARTICLE_DEPTH) * DENSITY_SCALE, 0.0, 0.0, 0.0);
#elif GRID == GRID_EMISSION
  Particle particle = load_particle(particle_texel(slot, imageSize(pos_age).x));
  vec3 color = particle_color(slot, look_at(particle.age / particle.life), 1.0);
  lanes = vec4(min(color * disc, vec3(MAX_PARTICLE_DEPTH)) * DENSITY_SCALE, 0.0);
#else
  Particle particle = load_particle(particle_texel(slot, imageSize(pos_age).x));
  lanes = vec4(clamp(particle.velocity * VELOCITY_SCALE, vec3(-MAX_VELOCITY_UNITS), vec3(MAX_VELOCITY_UNITS)),
               WEIGHT_SCALE);
#endif
  if (!(all(greaterThan(lanes, vec4(-3.0e38))) && all(lessThan(lanes, vec4(3.0e38))))) {
    return; /* NaN or infinite: nothing added */
  }
  ivec3 size = imageSize(sum_0);
  precise vec3 cells = (center - volume_placement.xyz) / voxel_edge - 0.5;
  vec3 base = floor(cells);
  vec3 fraction = cells - base;
  for (int corner = 0; corner < 8; corner++) {
    ivec3 offset = ivec3(corner & 1, (corner >> 1) & 1, corner >> 2);
    ivec3 voxel = ivec3(base) + offset;
    if (any(lessThan(voxel, ivec3(0))) || any(greaterThanEqual(voxel, size))) {
      continue;
    }
    vec3 weights = mix(1.0 - fraction, fraction, vec3(offset));
    precise float weight = weights.x * weights.y * weights.z;
    for (int lane = 0; lane < SUMS; lane++) {
      precise float units = lanes[lane] * weight + random_unit(uint(slot), uint(4 * corner + lane), VOLUME_DITHER_STREAM);
      add_units(voxel, lane, units);
    }
  }
}
