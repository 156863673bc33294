/* The transmittance toward each shadowed light at a world position: what the
 * light pass multiplies each light's irradiance by (addon/engine/look/lighting.py).
 * Channel k is shadow slot k (Light.shadow_slot).
 *
 * Needs shadow_grid.glsl before it, the image shadow_grid and the sampler
 * transmittance (FLOAT_3D, linear): shadow_volume.SHADOW_RESOURCES. */

/* Trilinear between voxel centers; 1.0 outside the grid and without one. */
vec4 shadow_transmittance(vec3 world)
{
  vec4 grid = shadow_grid_placement();
  if (!(grid.w > 0.0)) {
    return vec4(1.0);
  }
  vec3 size = vec3(textureSize(transmittance, 0));
  vec3 cells = grid_coordinates(world, grid);
  if (any(lessThan(cells, vec3(0.0))) || any(greaterThan(cells, size))) {
    return vec4(1.0);
  }
  return texture(transmittance, cells / size);
}
