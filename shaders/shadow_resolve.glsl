/* The density as floats (optical depth across one voxel edge) into the
 * texture the march samples: each level's sums read trilinearly at the
 * voxel's center and added up (ShadowVolume.build empties the sums before
 * the next frame's splat). */

float level_density(ivec3 voxel, int resolution, int level)
{
  int size = level_size(resolution, level);
  int start = level_start(resolution, level);
  vec3 cells = (vec3(voxel) + 0.5) / float(1 << level) - 0.5;
  vec3 base = floor(cells);
  vec3 fraction = cells - base;
  float sum = 0.0;
  for (int corner = 0; corner < 8; corner++) {
    ivec3 offset = ivec3(corner & 1, (corner >> 1) & 1, corner >> 2);
    ivec3 at = clamp(ivec3(base) + offset, ivec3(0), ivec3(size - 1));
    vec3 weights = mix(1.0 - fraction, fraction, vec3(offset));
    sum += float(imageLoad(shadow_density_sum, at + ivec3(0, 0, start)).x) * (weights.x * weights.y * weights.z);
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
  for (int level = 0; level < level_count(resolution); level++) {
    units += level_density(voxel, resolution, level);
  }
  imageStore(extinction, voxel, vec4(units / DENSITY_SCALE));
}
