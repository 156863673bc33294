/* Trails as camera-facing ribbons (addon/engine/simulate/trails.py), added into the
 * raster layer: an instance a particle, a quad (6 vertices) a segment.
 * Segment s joins trail point s and s + 1: point 0 is the particle (at shutter
 * close with MOTION_BLUR), point j >= 1 the ring's (j - 1)th newest.  A
 * vertex's sideways direction is the screen tangent through its point's
 * neighbours, so consecutive quads share their edge exactly (no overlap, no
 * gap).  Width and tint follow t = j / trail_length; the fragment's coverage
 * across the ribbon is anti-aliased over one pixel, and ribbons thinner than a
 * pixel stay one pixel wide and get fainter, like the particles. */

#ifdef GPU_VERTEX_SHADER
/* (end of the segment, side of the ribbon) of each vertex of the two triangles. */
const vec2 CORNERS[6] = vec2[6](vec2(0.0, -1.0), vec2(1.0, -1.0), vec2(1.0, 1.0),
                                vec2(0.0, -1.0), vec2(1.0, 1.0), vec2(0.0, 1.0));

vec2 screen_px(vec4 clip)
{
  return (clip.xy / clip.w * 0.5 + 0.5) * target_extent;
}

bool head_streaked = false; /* MOTION_BLUR: point 0 is at head_px, where the particle's streak ends */
vec2 head_px = vec2(0.0);

/* Screen position of trail point ``j`` seen at ``clip``. */
vec2 point_px(int j, vec4 clip)
{
  return j == 0 && head_streaked ? head_px : screen_px(clip);
}

void main()
{
  v_color = vec3(0.0);
  v_across = 0.0;
  v_half = 0.0;
  gl_Position = vec4(2.0, 2.0, 2.0, 1.0); /* outside: clipped */
  int index = gl_InstanceID;
  int segment = gl_VertexID / 6;
  vec2 corner = CORNERS[gl_VertexID % 6];
  Particle particle;
  Trail trail;
  if (!fetch_trail(index, particle, trail) || segment >= trail.filled) {
    return;
  }
  int j = segment + int(corner.x);
  vec4 here = view_proj * vec4(trail_point(index, j, trail), 1.0);
  vec4 before = view_proj * vec4(trail_point(index, max(j - 1, 0), trail), 1.0);
  vec4 after = view_proj * vec4(trail_point(index, min(j + 1, trail.filled), trail), 1.0);
  vec4 other = corner.x == 0.0 ? after : before;
  if (!(here.w > 0.0 && other.w > 0.0)) {
    return;
  }
#ifdef MOTION_BLUR
  vec2 open_px;
  head_streaked = shutter_path(particle.position, particle.velocity, target_extent, open_px, head_px);
#endif
  vec2 here_px = point_px(j, here);
  vec2 tangent = (after.w > 0.0 ? point_px(j + 1, after) : here_px) -
                 (before.w > 0.0 ? point_px(max(j - 1, 0), before) : here_px);
  float tangent_length = length(tangent);
  vec2 along = tangent_length > 1e-6 ? tangent / tangent_length : vec2(1.0, 0.0);
  vec2 across = vec2(-along.y, along.x);

  float t = float(j) / trail_length;
  vec4 look_now = particle_look(particle, particle.age / particle.life);
  float half_px = particle_radius_px(index, look_now, pixel_scale, here.w) * trail_width *
                  mix(1.0, trail_width_end, t);
  float faint = min(half_px * 2.0, 1.0); /* thinner than a pixel: a pixel wide, fainter */
  half_px = max(half_px, 0.5);
  v_color = particle_color(index, look_now, faint) * trail_tint_at(t);
  v_half = half_px;
  v_across = corner.y * (half_px + 1.0);
  vec2 corner_px = here_px + across * v_across;
  gl_Position = vec4((corner_px / target_extent * 2.0 - 1.0) * here.w, here.z, here.w);
}
#endif

#ifdef GPU_FRAGMENT_SHADER
void main()
{
  float coverage = clamp(v_half + 0.5 - abs(v_across), 0.0, 1.0);
  out_color = vec4(v_color * coverage, 0.0);
}
#endif
