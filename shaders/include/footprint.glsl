/* Footprints (addon/engine/draw/footprint.py): where a particle is over the
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

/* A sprite of `radius_px` pixels seen through the lens at clip w: its disc
 * convolved with the circle of confusion is about a disc of sqrt(r^2 + c^2)
 * (their spreads add in quadrature), as wide as the two together.  In focus
 * (c = 0): the sprite itself, exactly.  particle_depth.glsl marks this. */
float focus_widened_px(float radius_px, float clip_w)
{
  float coc = coc_radius_px(clip_w);
  precise float widened2 = radius_px * radius_px + coc * coc;
  return coc > 0.0 ? sqrt(widened2) : radius_px;
}

/* The sprite out of focus as raster_quads.glsl and sprite_footprint.glsl draw
 * it: focus_widened_px, with `light` (its coverage or alpha) dimmed by the
 * area ratio, so the light it adds (or the cover it gives) is kept. */
float focus_blurred_px(float radius_px, float clip_w, inout float light)
{
  float widened = focus_widened_px(radius_px, clip_w);
  light *= (radius_px / widened) * (radius_px / widened);
  return widened;
}

/* An additive quad (raster_quads.glsl, r pixels: its 1 - d^2 falloff) out of focus, as a lens spreads it:
 * its falloff convolved with the lens's disc of c pixels, which for c past about r is the disc's flat top with
 * a rim, not a wider bump.  Fitted to that convolution (least squares, c from 0 to 4 r; its error 3-7% against
 * the wider bump's 25-47%): flat out to `inner`, falling as outer^2 - d^2 to zero at the returned outer
 * radius, outer = max(sqrt(r^2 + c^2), c + 0.6 r) and inner = max(c - 0.8 r, 0), with `light` times
 * r^2 / (outer^2 + inner^2), the area ratio that keeps its light.  In focus (c = 0): the quad itself. */
float quad_defocused_px(float radius_px, float clip_w, inout float light, out float inner)
{
  float coc = coc_radius_px(clip_w);
  precise float outer2 = radius_px * radius_px + coc * coc;
  float outer = max(sqrt(outer2), coc + 0.6 * radius_px);
  inner = max(coc - 0.8 * radius_px, 0.0);
  light *= radius_px * radius_px / (outer * outer + inner * inner);
  return outer;
}
#endif

/* Where a particle's light can land, "the pixels it covers": the pixels whose
 * centers are closer than `radius` to the segment center - half_path ..
 * center + half_path (a capsule; a disc without a path).  The particle layer's
 * depth (particle_depth.glsl) marks exactly these, so every pixel the
 * particle lights has its depth for the render's compositor. */
struct Reach {
  vec2 center;
  vec2 half_path;
  float radius; /* 0: covers nothing */
};

/* A splat tap's pixel center is less than 1 from its sample on each axis, so
 * under sqrt 2 away (1.5: the 3x3 block around a sample on a pixel center). */
const float TAP_REACH = 1.5;

/* Over the screen path `start` .. `end`: a capsule of `radius`. */
Reach path_reach(vec2 start, vec2 end, float radius)
{
  precise vec2 center = 0.5 * (start + end);
  precise vec2 half_path = 0.5 * (end - start);
  return Reach(center, half_path, radius);
}

/* A point particle of the splat (splat.glsl, splat_footprint.glsl): samples
 * within `spread` of its path (the circle of confusion; 0 without depth of
 * field) add to the pixels a tap away; a circle wider than splat_max_radius is
 * a bokeh disc instead (bokeh_discs.glsl), lighting the pixel centers closer
 * than spread + 1/2 to its path (disc_coverage, sprite_shape.glsl). */
Reach point_reach(vec2 start, vec2 end, float spread)
{
#ifdef DEPTH_OF_FIELD
  if (spread > splat_max_radius) {
    precise float disc = spread + 0.5;
    return path_reach(start, end, disc);
  }
#endif
  precise float taps = spread + TAP_REACH;
  return path_reach(start, end, taps);
}

/* A sprite or quad of `radius_px` (raster_quads.glsl, sprite_footprint.glsl:
 * at least one pixel, coverage zero at its edge), along its path; 1/2 more for
 * the rasterizer's rounding of its corners. */
Reach sprite_reach(vec2 start, vec2 end, float radius_px)
{
  precise float edge = max(radius_px, 1.0) + 0.5;
  return path_reach(start, end, edge);
}

/* Whether `reach` covers the pixel centered at `at`.  Squared distances, no
 * division or root, unfused: every GPU and the numpy reference decide alike. */
bool reach_covers(Reach reach, vec2 at)
{
  precise vec2 offset = at - reach.center;
  vec2 h = reach.half_path;
  precise float along = offset.x * h.x + offset.y * h.y;
  precise float half_length2 = h.x * h.x + h.y * h.y;
  precise float radius2 = reach.radius * reach.radius;
  if (along >= half_length2 || along <= -half_length2) { /* nearest to an end (or a disc: no path) */
    precise vec2 from_end = along >= half_length2 ? offset - h : offset + h;
    precise float distance2 = from_end.x * from_end.x + from_end.y * from_end.y;
    return distance2 < radius2;
  }
  precise float cross = offset.x * h.y - offset.y * h.x; /* |h| times the distance from the path's line */
  precise float cross2 = cross * cross;
  precise float bound = radius2 * half_length2;
  return cross2 < bound;
}

/* The pixels whose centers the reach may cover, clamped to a target of `size`:
 * (x0, y0, x1, y1), empty when x1 < x0 (clamped as floats first: far off screen
 * must not overflow int). */
ivec4 reach_pixel_rect(Reach reach, ivec2 size)
{
  vec2 extent = abs(reach.half_path) + reach.radius;
  vec2 low = floor(reach.center - extent - 0.5);
  vec2 high = floor(reach.center + extent - 0.5) + 1.0;
  return ivec4(ivec2(clamp(low, vec2(0.0), vec2(size))), ivec2(clamp(high, vec2(-1.0), vec2(size - 1))));
}
