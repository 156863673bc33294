/* One VDB grid's fixed-point sums (volume_splat.glsl) as floats in world
 * units, per voxel: GRID_DENSITY extinction per unit length (R32F),
 * GRID_EMISSION radiance per unit length (rgb), GRID_VELOCITY the weighted
 * mean velocity in world units per second (xyz; 0 where nothing landed).
 * Each voxel's sums are set back to 0 once read: the splat adds inside the
 * grid's shape alone and the resolve covers it, so the sums are empty for
 * the next frame without clearing the images (Blender's clear of the large
 * 3D images took most of a frame's GPU time). */

void main()
{
  ivec3 voxel = ivec3(gl_GlobalInvocationID);
  if (any(greaterThanEqual(voxel, imageSize(sum_0)))) {
    return;
  }
#if GRID == GRID_DENSITY
  float per_length = 1.0 / (DENSITY_SCALE * voxel_edge);
  imageStore(grid_values, voxel, vec4(float(imageLoad(sum_0, voxel).x) * per_length));
#elif GRID == GRID_EMISSION
  float per_length = 1.0 / (DENSITY_SCALE * voxel_edge);
  vec3 sums = vec3(imageLoad(sum_0, voxel).x, imageLoad(sum_1, voxel).x, imageLoad(sum_2, voxel).x);
  imageStore(grid_values, voxel, vec4(sums * per_length, 0.0));
#else
  ivec3 sums = ivec3(imageLoad(sum_0, voxel).x, imageLoad(sum_1, voxel).x, imageLoad(sum_2, voxel).x);
  float weight = float(imageLoad(sum_3, voxel).x);
  precise vec3 velocity = weight > 0.0 ? vec3(sums) * (WEIGHT_SCALE / VELOCITY_SCALE) / weight : vec3(0.0);
  imageStore(grid_values, voxel, vec4(velocity, 0.0));
#endif
  imageStore(sum_0, voxel, uvec4(0u));
#if SUMS > 1
  imageStore(sum_1, voxel, uvec4(0u));
  imageStore(sum_2, voxel, uvec4(0u));
#endif
#if SUMS > 3
  imageStore(sum_3, voxel, uvec4(0u));
#endif
}
