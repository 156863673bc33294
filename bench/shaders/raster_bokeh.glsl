/* The benchmark's peer of the bokeh discs (addon/engine/draw/bokeh.py), the product's
 * path before them: circles of confusion wider than the footprint splat takes
 * (splat_max_radius pixels) rasterized, one soft disc per particle (a quad, gl_InstanceID = particle), swept along
 * its shutter path with MOTION_BLUR.  Its energy is the splat's color spread
 * evenly over the shape's area, so the frame's total stays what the particle
 * adds in focus; the rim fades over one pixel. */

#ifdef GPU_VERTEX_SHADER
/* A corner of the quad that holds a disc of ``radius`` pixels swept from
 * ``start`` to ``end``: corner.x runs along the path, corner.y across it. */
vec2 capsule_corner(vec2 start, vec2 end, float radius, vec2 corner)
{
  vec2 path = end - start;
  float len = length(path);
  vec2 along = len > 1e-3 ? path / len : vec2(1.0, 0.0);
  vec2 across = vec2(-along.y, along.x);
  return 0.5 * (start + end) + along * (corner.x * (radius + 0.5 * len)) + across * (corner.y * radius);
}

const vec2 CORNERS[6] = vec2[6](vec2(-1.0, -1.0), vec2(1.0, -1.0), vec2(1.0, 1.0),
                                vec2(-1.0, -1.0), vec2(1.0, 1.0), vec2(-1.0, 1.0));

void main()
{
  vec2 corner = CORNERS[gl_VertexID];
  v_color = vec3(0.0);
  v_local = vec2(0.0);
  v_shape = vec2(0.0);
  gl_Position = vec4(2.0, 2.0, 2.0, 1.0); /* outside: clipped */
  Particle particle;
  if (!fetch_particle(gl_InstanceID, particle)) {
    return;
  }
  vec4 clip = transform_point(view_proj, particle.position);
  if (!in_depth_range(clip)) {
    return;
  }
  float radius = coc_radius_px(clip.w);
  if (!(radius > splat_max_radius)) {
    return; /* splatted */
  }
  vec2 size = target_extent;
  vec2 start, end;
  screen_path(particle.position, particle.velocity, screen_of(clip, size), size, start, end);
  float half_path = 0.5 * length(end - start);
  float reach = radius + 0.5; /* where the rim's ramp ends: no fragment past it adds anything */
  v_local = vec2(corner.x * (reach + half_path), corner.y * reach);
  v_shape = vec2(half_path, radius);
  vec4 look_now = look_at(particle.age / particle.life);
  float coverage = pixel_coverage(particle_radius_px(gl_InstanceID, look_now, pixel_scale, clip.w));
  /* Area under the rim's ramp: pi (r^2 + 1/12) for the disc, 2 r per pixel of path. */
  float area = 3.14159265 * (radius * radius + 1.0 / 12.0) + 4.0 * radius * half_path;
  v_color = particle_color(gl_InstanceID, look_now, coverage) / area;
  vec2 corner_px = capsule_corner(start, end, reach, corner);
  gl_Position = vec4((corner_px / size * 2.0 - 1.0) * clip.w, clip.z, clip.w);
}
#endif

#ifdef GPU_FRAGMENT_SHADER
void main()
{
  /* Distance from the path segment (along it: past its ends only). */
  vec2 from_path = vec2(max(abs(v_local.x) - v_shape.x, 0.0), v_local.y);
  float inside = clamp(v_shape.y + 0.5 - length(from_path), 0.0, 1.0);
  out_color = vec4(v_color * inside, 0.0);
}
#endif
