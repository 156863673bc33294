/* The density as floats (optical depth across one voxel edge) into the
 * texture the march samples: each blurred sublevel read trilinearly at the
 * voxel's center and added up (ShadowVolume.build empties the sums before
 * the next frame's splat). */

float sublevel_density(ivec3 voxel, int resolution, int sublevel)
{
  int level = sublevel_level(sublevel);
  int size = level_size(resolution, level);
  int start = sublevel_start(resolution, sublevel);
  vec3 cells = (vec3(voxel) + 0.5) / float(1 << level) - 0.5;
  vec3 base = floor(cells);
  vec3 fraction = cells - base;
  float sum = 0.0;
  for (int corner = 0; corner < 8; corner++) {
    ivec3 offset = ivec3(corner & 1, (corner >> 1) & 1, corner >> 2);
    ivec3 at = clamp(ivec3(base) + offset, ivec3(0), ivec3(size - 1));
    vec3 weights = mix(1.0 - fraction, fraction, vec3(offset));
    sum += imageLoad(blurred, at + ivec3(0, 0, start)).x * (weights.x * weights.y * weights.z);
  }
  return sum;
}

void main()
{
  ivec3 voxel = ivec3(gl_GlobalInvocationID);
  int resolution = imageSize(extinction).x;
  if (any(greaterThanEqual(voxel, ivec3(resolution)))) {
    return;
  }
  float units = 0.0;
  for (int sublevel = 0; sublevel < sublevel_count(resolution); sublevel++) {
    units += sublevel_density(voxel, resolution, sublevel);
  }
  imageStore(extinction, voxel, vec4(units / DENSITY_SCALE));
}
