/* Splats each live particle into one VDB grid's fixed-point sums
 * (volume_grids.py): over the voxels whose centers lie within its support
 * h (its radius in voxels, clamped to [MIN_SUPPORT, MAX_SUPPORT]) with the
 * weight 1 - d^2 / h^2 (the additive quads' falloff), normalized to sum to
 * 1, one imageAtomicAdd per voxel and lane into the R32UI 3D images sum_0 ..
 * sum_<SUMS - 1>.  GRID picks what a particle adds (times its weight):
 *   GRID_DENSITY:  its cross-section (extinction_scale * pi r^2) over the
 *                  voxel's volume, DENSITY_SCALE units per optical depth
 *                  across a voxel edge, at most MAX_PARTICLE_DEPTH an add
 *                  (MAX_ADD: an opaque voxel already; 1e6 such adds fit);
 *   GRID_EMISSION: its disc (pi r^2) times its HDR color (particle_color),
 *                  the same units and limit per channel;
 *   GRID_VELOCITY: its velocity (VELOCITY_SCALE units per world unit per
 *                  second, at most MAX_VELOCITY_UNITS; two's complement:
 *                  the adds wrap) and its weight (WEIGHT_SCALE units), lane 3.
 * Rounding is dithered by a fixed hash of (slot, voxel of the support,
 * lane): faint particles still add up to the right sum, the same every run.
 * Divisions are correctly rounded (div_rn) and sums in a fixed order, so the
 * numpy reference gets the same units. */

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

/* 1 - d^2 / h^2 at the center of ``voxel``, d its distance from the particle (0 outside the support). */
float support_weight(vec3 cells, ivec3 voxel, float inverse_h2)
{
  precise vec3 delta = vec3(voxel) + 0.5 - cells;
  precise float d2 = (delta.x * delta.x + delta.y * delta.y) + delta.z * delta.z;
  precise float weight = 1.0 - d2 * inverse_h2;
  return max(weight, 0.0);
}

void main()
{
  int slot = particle_index(imageSize(pos_age).x);
  vec3 center;
  float radius;
  if (!shadow_particle(slot, center, radius)) {
    return;
  }
  precise float disc = div_rn(PI * radius * radius, voxel_edge * voxel_edge);
  if (!(disc > 0.0)) {
    return; /* no size: in no grid (its velocity neither) */
  }
  vec4 lanes;
#if GRID == GRID_DENSITY
  lanes = vec4(extinction_scale * disc * DENSITY_SCALE, 0.0, 0.0, 0.0);
#elif GRID == GRID_EMISSION
  Particle particle = load_particle(particle_texel(slot, imageSize(pos_age).x));
  vec3 color = particle_color(slot, particle_look(particle, particle.age / particle.life), 1.0);
  lanes = vec4(color * disc * DENSITY_SCALE, 0.0);
#else
  Particle particle = load_particle(particle_texel(slot, imageSize(pos_age).x));
  lanes = vec4(clamp(particle.velocity * VELOCITY_SCALE, vec3(-MAX_VELOCITY_UNITS), vec3(MAX_VELOCITY_UNITS)),
               WEIGHT_SCALE);
#endif
  if (!(all(greaterThan(lanes, vec4(-3.0e38))) && all(lessThan(lanes, vec4(3.0e38))))) {
    return; /* NaN or infinite: nothing added */
  }
  precise vec3 offset = center - grid_corner;
  vec3 cells = vec3(div_rn(offset.x, voxel_edge), div_rn(offset.y, voxel_edge), div_rn(offset.z, voxel_edge));
  float h = clamp(div_rn(radius, voxel_edge), MIN_SUPPORT, MAX_SUPPORT);
  float inverse_h2 = div_rn(1.0, h * h);
  ivec3 first = ivec3(floor(cells - h));
  ivec3 last = ivec3(floor(cells + h));
  float total = 0.0;
  for (int z = first.z; z <= last.z; z++) {
    for (int y = first.y; y <= last.y; y++) {
      for (int x = first.x; x <= last.x; x++) {
        precise float sum = total + support_weight(cells, ivec3(x, y, z), inverse_h2);
        total = sum;
      }
    }
  }
  precise vec4 scaled = lanes * div_rn(1.0, total);
  ivec3 size = grid_shape; /* not the images': the resolve empties the shape's sums alone */
  uint step = 0u;
  for (int z = first.z; z <= last.z; z++) {
    for (int y = first.y; y <= last.y; y++) {
      for (int x = first.x; x <= last.x; x++, step++) {
        ivec3 voxel = ivec3(x, y, z);
        float weight = support_weight(cells, voxel, inverse_h2);
        if (weight == 0.0 || any(lessThan(voxel, ivec3(0))) || any(greaterThanEqual(voxel, size))) {
          continue;
        }
        for (int lane = 0; lane < SUMS; lane++) {
          precise float units = min(scaled[lane] * weight, MAX_ADD) + random_unit(uint(slot), 4u * step + uint(lane), VOLUME_DITHER_STREAM);
          add_units(voxel, lane, units);
        }
      }
    }
  }
}
