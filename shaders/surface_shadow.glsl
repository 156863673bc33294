/* Particle shadows on the scene's surfaces (addon/engine/light/surface_shadow.py
 * states the estimate): per pixel of the scene depth, the surface's world
 * position and normal (from the depth of its neighbours), each light's share
 * of its lighting, and how much of that the particles take away toward the
 * shadowed lights.  Writes the darkening 1 - factor (0: no surface, unlit or
 * unshadowed), so that an empty image is no shadow. */

const vec3 LUMINANCE = vec3(0.2126, 0.7152, 0.0722); /* Rec. 709 */

/* The world position seen at ``pixel`` at window depth ``depth`` (0 near .. 1 far). */
vec3 unproject(ivec2 pixel, float depth)
{
  vec2 ndc = (vec2(pixel) + 0.5) / vec2(imageSize(surface_shadow)) * 2.0 - 1.0;
  vec4 world = clip_to_world * vec4(ndc, depth * 2.0 - 1.0, 1.0);
  return world.xyz / world.w;
}

float depth_at(ivec2 pixel)
{
  return texelFetch(scene_depth, pixel, 0).x;
}

/* The step to the neighbour along ``axis`` on the same surface: the side whose
 * depth is nearer this pixel's (an edge's other side is another surface). */
vec3 surface_step(ivec2 pixel, float depth, vec3 world, ivec2 axis)
{
  ivec2 size = imageSize(surface_shadow);
  ivec2 ahead = pixel + axis, behind = pixel - axis;
  bool has_ahead = all(lessThan(ahead, size)) && depth_at(ahead) < 1.0;
  bool has_behind = all(greaterThanEqual(behind, ivec2(0))) && depth_at(behind) < 1.0;
  if (has_ahead && (!has_behind || abs(depth_at(ahead) - depth) <= abs(depth_at(behind) - depth))) {
    return unproject(ahead, depth_at(ahead)) - world;
  }
  if (has_behind) {
    return world - unproject(behind, depth_at(behind));
  }
  return vec3(0.0);
}

/* Cubic B-spline filtered transmittance at ``cells`` (voxels from the grid's
 * corner) from 8 trilinear taps (Sigg and Hadwiger, GPU Gems 2, ch. 20):
 * smooth across voxels, so the coarse grid casts no bands. */
vec4 bspline_transmittance(vec3 cells)
{
  vec3 size = vec3(textureSize(transmittance, 0));
  vec3 f = cells - 0.5;
  vec3 base = floor(f);
  vec3 a = f - base;
  vec3 w0 = (1.0 - a) * (1.0 - a) * (1.0 - a) / 6.0;
  vec3 w1 = (4.0 - 6.0 * a * a + 3.0 * a * a * a) / 6.0;
  vec3 w3 = a * a * a / 6.0;
  vec3 w2 = 1.0 - w0 - w1 - w3;
  vec3 g0 = w0 + w1, g1 = w2 + w3;
  vec3 tap0 = base - 0.5 + w1 / g0, tap1 = base + 1.5 + w3 / g1; /* texel coordinates, centers at + 0.5 */
  vec4 sum = vec4(0.0);
  for (int corner = 0; corner < 8; corner++) {
    bvec3 high = bvec3(corner & 1, (corner >> 1) & 1, corner >> 2);
    vec3 at = mix(tap0, tap1, high);
    vec3 weights = mix(g0, g1, high);
    sum += texture(transmittance, at / size) * (weights.x * weights.y * weights.z);
  }
  return sum;
}

/* The particles' transmittance from ``world`` toward ``light`` (its shadow
 * slot's channel): the volume sampled where the ray toward the light enters
 * the grid (at ``world`` inside it); 1 where the ray misses the grid or the
 * light lies before it. */
float surface_transmittance(Light light, vec3 world, vec4 grid)
{
  vec3 toward = int(light.kind) == LIGHT_TYPE_SUN ? -light.direction : light.position - world;
  float reach = int(light.kind) == LIGHT_TYPE_SUN ? 1e30 : length(toward);
  if (!(reach > 0.0)) {
    return 1.0;
  }
  vec3 direction = toward / (int(light.kind) == LIGHT_TYPE_SUN ? length(toward) : reach);
  vec3 size = vec3(textureSize(transmittance, 0));
  vec3 inverse = 1.0 / direction; /* +-inf along an axis the ray does not move on */
  vec3 low = (grid.xyz - world) * inverse, high = (grid.xyz + size * grid.w - world) * inverse;
  vec3 near = min(low, high), far = max(low, high);
  float enter = max(max(max(near.x, near.y), near.z), 0.0);
  float leave = min(min(min(far.x, far.y), far.z), reach);
  if (!(enter <= leave)) {
    return 1.0;
  }
  vec3 cells = clamp(grid_coordinates(world + direction * enter, grid), vec3(0.0), size);
  return clamp(bspline_transmittance(cells)[int(light.shadow_slot)], 0.0, 1.0);
}

void main()
{
  ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
  if (any(greaterThanEqual(pixel, imageSize(surface_shadow)))) {
    return;
  }
  float depth = depth_at(pixel);
  vec4 grid = shadow_grid_placement();
  float darkening = 0.0;
  if (depth < 1.0 && grid.w > 0.0) {
    vec3 world = unproject(pixel, depth);
    vec3 normal = cross(surface_step(pixel, depth, world, ivec2(1, 0)), surface_step(pixel, depth, world, ivec2(0, 1)));
    vec3 to_camera = unproject(pixel, 0.0) - world; /* perspective or orthographic alike */
    float length_squared = dot(normal, normal);
    /* a lone pixel: lit as if it faced the camera */
    normal = length_squared > 0.0 ? normal * inversesqrt(length_squared) : normalize(to_camera);
    normal = dot(normal, to_camera) < 0.0 ? -normal : normal;
    vec3 lit = ambient, shadowed = ambient;
    for (int i = 0; i < light_count; i++) {
      Light light = load_light(i);
      vec3 travel;
      vec3 share = light_irradiance(light, world, 0.0, travel) * (max(-dot(travel, normal), 0.0) / PI);
      lit += share;
      shadowed += light.shadow_slot >= 0.0 ? share * surface_transmittance(light, world, grid) : share;
    }
    float whole = dot(lit, LUMINANCE);
    darkening = whole > 0.0 ? clamp(1.0 - dot(shadowed, LUMINANCE) / whole, 0.0, 1.0) : 0.0;
  }
  imageStore(surface_shadow, pixel, vec4(darkening));
}
