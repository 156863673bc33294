/* Footprints (addon/engine/footprint.py): where a particle is over the
 * shutter and how wide the lens spreads it.  Shared by the footprint splat,
 * the rasterized sprites and the bokeh discs; MOTION_BLUR needs the constants shutter,
 * view_proj_open and view_proj_close, DEPTH_OF_FIELD the constant focus (coc_scale, focus_depth, splat_max_radius).
 * Where floats become pixels or integer colors the arithmetic is exact
 * (precise, div_rn, transform_point: see common.glsl). */

/* Target pixel coordinates of a clip position (w > 0) on a target of ``size``
 * pixels: window_coordinates' x and y (common.glsl), for any host's size. */
vec2 screen_of(vec4 clip, vec2 size)
{
  precise vec2 screen = (vec2(div_rn(clip.x, clip.w), div_rn(clip.y, clip.w)) * 0.5 + 0.5) * size;
  return screen;
}

/* In front of the camera and between the near and far planes: the cull of a
 * footprint, which can reach into the view from beside it (its ends and
 * spread bound x and y instead). */
bool in_depth_range(vec4 clip)
{
  return clip.w > 0.0 && abs(clip.z) <= clip.w;
}

#ifdef MOTION_BLUR
/* Screen positions at shutter open and close: the particle moved on by its
 * velocity, seen through the camera of that moment.  False when either end is
 * behind the camera or the velocity is not finite (then: no streak). */
bool shutter_path(vec3 position, vec3 velocity, vec2 size, out vec2 open_px, out vec2 close_px)
{
  precise vec3 at_open = position + velocity * shutter_open;
  precise vec3 at_close = position + velocity * shutter_close;
  vec4 clip_open = transform_point(view_proj_open, at_open);
  vec4 clip_close = transform_point(view_proj_close, at_close);
  bool seen = clip_open.w > 0.0 && clip_close.w > 0.0 && is_finite(velocity);
  open_px = seen ? screen_of(clip_open, size) : vec2(0.0);
  close_px = seen ? screen_of(clip_close, size) : vec2(0.0);
  return seen;
}
#endif

/* The particle's screen path over the shutter, `start` to `end`: its
 * shutter_path with MOTION_BLUR where that is seen, otherwise standing at `here`. */
void screen_path(vec3 position, vec3 velocity, vec2 here, vec2 size, out vec2 start, out vec2 end)
{
  start = here;
  end = here;
#ifdef MOTION_BLUR
  vec2 open_px, close_px;
  if (shutter_path(position, velocity, size, open_px, close_px)) {
    start = open_px;
    end = close_px;
  }
#endif
}

#ifdef DEPTH_OF_FIELD
/* Radius in pixels of the circle of confusion at clip w (the view depth of a perspective camera). */
float coc_radius_px(float clip_w)
{
  precise float spread = coc_scale * abs(clip_w - focus_depth);
  return div_rn(spread, clip_w);
}
#endif
