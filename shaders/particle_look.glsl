/* What a live particle looks like, shared by the splat and the rasterized
 * types so that every path draws the same colors.
 *
 * Needs the constants color_start (rgb, w: emission strength) and color_end
 * (rgb, w: world radius). */

/* Born (age >= 0), not yet dead (age < life; life <= 0 never lived), finite.
 * NaN fails every comparison, so it is culled too. */
bool particle_alive(vec4 pos_age, float life)
{
  return pos_age.w >= 0.0 && pos_age.w < life && is_finite(pos_age.xyz);
}

/* The particle's projected disc area in pixels, clamped at one pixel: far
 * particles get darker instead of flickering. */
float pixel_coverage(float radius_px)
{
  return min(3.14159265 * radius_px * radius_px, 1.0);
}

/* HDR color at this point of life, times strength and coverage.
 * precise: the numpy reference does not fuse this multiply-add; NVIDIA drivers would. */
vec3 particle_color(float t, float coverage)
{
  precise vec3 color = (color_start.rgb + (color_end.rgb - color_start.rgb) * t) * (color_start.w * coverage);
  return color;
}
