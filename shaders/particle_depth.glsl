/* The nearest particle's view depth per pixel: what the render's compositor
 * compares with the scene's own depth pass (Blender's Z: distance along the
 * camera axis).  Same cull and pixel as the splat; a particle wider than a
 * pixel (sprites, quads) marks the square its projected radius covers, up to
 * MAX_FOOTPRINT pixels each side.  Non-negative floats order like their bit
 * patterns, so one atomic min on the bits keeps the nearest.  A particle
 * that adds no light (black, or zero strength) marks nothing. */

void main()
{
  int width = imageSize(pos_age).x;
  int index = particle_index(width);
  if (index >= count) {
    return;
  }
  ivec2 texel = particle_texel(index, width);
  vec4 pos_age_in = imageLoad(pos_age, texel);
  pos_age_in.xyz += state_origin.xyz;
  float life = imageLoad(vel_life, texel).w;
  if (!particle_alive(pos_age_in, life)) {
    return;
  }
  vec4 clip = transform_point(view_proj, pos_age_in.xyz);
  if (!(clip.w > 0.0 && all(lessThanEqual(abs(clip.xyz), vec3(clip.w))))) {
    return;
  }
  ivec2 pixel = min(ivec2(window_coordinates(clip, target_size).xy), target_size - 1);
  precise float depth = max(dot(view_depth.xyz, pos_age_in.xyz) + view_depth.w, 0.0);
  vec4 look_now = look_at(pos_age_in.w / life);
  if (color_start.w * max(look_now.r, max(look_now.g, look_now.b)) <= 0.0) {
    return; /* adds no light, hides nothing */
  }
  int reach = min(int(particle_radius_px(index, look_now, quantize.w, clip.w)), MAX_FOOTPRINT);
  uint bits = floatBitsToUint(depth);
  for (int y = max(pixel.y - reach, 0); y <= min(pixel.y + reach, target_size.y - 1); y++) {
    for (int x = max(pixel.x - reach, 0); x <= min(pixel.x + reach, target_size.x - 1); x++) {
      imageAtomicMin(particle_depth, ivec2(x, y), bits);
    }
  }
}
