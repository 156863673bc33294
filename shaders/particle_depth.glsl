/* The nearest particle's view depth per pixel: what the render's compositor
 * compares with the scene's own depth pass (Blender's Z: distance along the
 * camera axis).  Same cull and pixel as the splat; a particle wider than a
 * pixel (sprites, quads) marks the square its projected radius covers, up to
 * MAX_FOOTPRINT pixels each side.  Non-negative floats order like their bit
 * patterns, so one atomic min on the bits keeps the nearest.  A particle
 * that adds no light (black, or zero strength) marks nothing. */

void main()
{
  int index;
  vec4 pos_age_in, vel_life_in, clip;
  if (!read_visible_particle(invocation_slot(), index, pos_age_in, vel_life_in, clip)) {
    return;
  }
  ivec2 pixel = min(ivec2(window_coordinates(clip, target_size).xy), target_size - 1);
  precise float depth = max(dot(view_axis, pos_age_in.xyz) + view_offset, 0.0);
  vec4 look_now = look_at(div_rn(pos_age_in.w, vel_life_in.w));
  if (emission_strength * max(look_now.r, max(look_now.g, look_now.b)) <= 0.0) {
    return; /* adds no light, hides nothing */
  }
  /* At least the 3x3 block: an anti-aliased point lights the 2x2 pixels around its position. */
  int reach = clamp(int(particle_radius_px(index, look_now, pixel_scale, clip.w)), 1, MAX_FOOTPRINT);
  uint bits = floatBitsToUint(depth);
  ivec2 low = max(pixel - reach, ivec2(0));
  ivec2 high = min(pixel + reach, target_size - 1);
  for (int y = low.y; y <= high.y; y++) {
    for (int x = low.x; x <= high.x; x++) {
      imageAtomicMin(particle_depth, ivec2(x, y), bits);
    }
  }
}
