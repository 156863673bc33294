/* Transmittance from each voxel center toward each shadow slot's light:
 * exp(-optical depth), the density texture sampled trilinearly at the middle
 * of whole-voxel steps (equal steps that end at the light or where the ray
 * leaves the grid: no step pattern tied to the world, so no banding that
 * crawls).  A sun is along its direction, other lights toward their position
 * (a light inside the cloud: only what lies between).  With SCENE_SHADOWS,
 * times the scene occluders' shadow at the voxel (percentage-closer, 3x3
 * taps of each slot's depth map). */

float optical_depth(vec3 start, vec3 direction, float distance, vec4 grid, vec3 size)
{
  int steps = int(ceil(distance * STEPS_PER_VOXEL / grid.w));
  if (steps <= 0) {
    return 0.0;
  }
  float step_length = distance / float(steps);
  vec3 start_cells = grid_coordinates(start, grid);
  vec3 step_cells = direction * (step_length / grid.w);
  float depth = 0.0;
  for (int i = 0; i < steps; i++) {
    vec3 cells = start_cells + step_cells * (float(i) + 0.5);
    depth += texture(extinction, cells / size).x;
  }
  return depth * (step_length / grid.w);
}

/* How far a ray from inside the grid runs before it leaves (slabs). */
float grid_exit(vec3 start, vec3 direction, vec4 grid, vec3 size)
{
  vec3 far_corner = grid.xyz + size * grid.w;
  vec3 inverse = 1.0 / direction;  /* +-inf along an axis the ray does not move on: that slab never ends it */
  vec3 exits = max((grid.xyz - start) * inverse, (far_corner - start) * inverse);
  return max(min(min(exits.x, exits.y), exits.z), 0.0);
}

#ifdef SCENE_SHADOWS
/* The fraction of 3x3 taps of slot ``slot``'s occluder depth map that see the voxel (1: lit). */
float occluder_shadow(int slot, vec3 world)
{
  if (occluder_tiles[slot] == 0.0) {
    return 1.0;
  }
  mat4 light_view_proj = mat4(occluder_matrices[slot * 4], occluder_matrices[slot * 4 + 1],
                              occluder_matrices[slot * 4 + 2], occluder_matrices[slot * 4 + 3]);
  vec4 clip = light_view_proj * vec4(world, 1.0);
  if (!(clip.w > 0.0)) {
    return 1.0;
  }
  vec3 ndc = clip.xyz / clip.w;
  if (any(greaterThan(abs(ndc.xy), vec2(1.0)))) {
    return 1.0;  /* beside the map: nothing of the scene between (the map covers every occluder) */
  }
  vec2 map_size = vec2(textureSize(occluder_depth, 0));
  vec2 tile = vec2(floor(map_size.x / float(MAX_SHADOW_SLOTS)), map_size.y);
  vec2 texel = (ndc.xy * 0.5 + 0.5) * tile;
  float depth = min(ndc.z * 0.5 + 0.5, 1.0) - occluder_bias;  /* beyond the far plane: behind every occluder */
  float lit = 0.0;
  for (int dy = -1; dy <= 1; dy++) {
    for (int dx = -1; dx <= 1; dx++) {
      ivec2 tap = ivec2(clamp(texel + vec2(dx, dy), vec2(0.5), tile - 0.5)) + ivec2(slot * int(tile.x), 0);
      lit += texelFetch(occluder_depth, tap, 0).x >= depth ? 1.0 : 0.0;
    }
  }
  return lit / 9.0;
}
#endif

void main()
{
  ivec3 voxel = ivec3(gl_GlobalInvocationID);
  ivec3 voxels = imageSize(transmittance);
  if (any(greaterThanEqual(voxel, voxels))) {
    return;
  }
  vec4 grid = shadow_grid_placement();
  vec4 result = vec4(1.0);
  if (grid.w > 0.0) {
    vec3 size = vec3(voxels);
    vec3 start = grid.xyz + (vec3(voxel) + 0.5) * grid.w;
    for (int slot = 0; slot < MAX_SHADOW_SLOTS; slot++) {
      vec4 slot_light = shadow_lights[slot];
      if (slot_light.w == LIGHT_NONE) {
        continue;
      }
      vec3 toward = slot_light.w == LIGHT_DIRECTIONAL ? slot_light.xyz : slot_light.xyz - start;
      float reach = length(toward);
      if (!(reach > 0.0)) {
        continue;  /* the light sits at the voxel center: nothing between */
      }
      vec3 direction = toward / reach;
      float distance = grid_exit(start, direction, grid, size);
      if (slot_light.w != LIGHT_DIRECTIONAL) {
        distance = min(distance, reach);
      }
      result[slot] = exp(-optical_depth(start, direction, distance, grid, size));
#ifdef SCENE_SHADOWS
      result[slot] *= occluder_shadow(slot, start);
#endif
    }
  }
  imageStore(transmittance, voxel, result);
}
