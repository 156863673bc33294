/* Trail points as the drawing kernels read them (trails.py; samplers
 * trail_points and trail_heads, the constant trail_length, trail.glsl). */

/* Where particle ``index``'s trail starts: ``head``, trail point 0 (the particle itself, at shutter close
 * with MOTION_BLUR: where the splat's streak ends), the ring's ``newest`` point and its ``filled`` points;
 * ``state_size``: the heads' size (the state images'). */
struct Trail {
  vec3 head;
  int newest;
  int filled;
  ivec2 state_size;
};

/* Particle ``index``'s state and the start of its trail; false when the particle is not alive. */
bool fetch_trail(int index, out Particle particle, out Trail trail)
{
  if (!fetch_particle(index, particle)) {
    return false;
  }
  trail.state_size = textureSize(trail_heads, 0);
  vec4 ring_head = texelFetch(trail_heads, particle_texel(index, trail.state_size.x), 0);
  trail.newest = int(ring_head.x);
  trail.filled = int(ring_head.y);
  trail.head = particle.position;
#ifdef MOTION_BLUR
  if (is_finite(particle.velocity)) {
    trail.head += particle.velocity * shutter_close;
  }
#endif
  return true;
}

/* World position of trail point ``j`` of particle ``index``: 0 is the head, j >= 1 the ring's (j - 1)th newest
 * point. */
vec3 trail_point(int index, int j, Trail trail)
{
  if (j == 0) {
    return trail.head;
  }
  int ring = int(trail_length);
  int point = (trail.newest - (j - 1) + ring) % ring;
  return texelFetch(trail_points, trail_texel(index, point, trail.state_size), 0).xyz;
}

/* Segment s of particle ``index``'s trail (from trail point s to s + 1) for the kernels that run a segment an
 * invocation (trail_footprint.glsl, trail_depth.glsl): the particle's state and trail, the ends in clip space. */
struct TrailSegment {
  int index;
  int s;
  Particle particle;
  Trail trail;
  vec4 near_end;
  vec4 far_end;
};

/* The segment of such a kernel's invocation: index x trail_length + s, 256 invocations a group. */
#define SEGMENT_ENTRY (int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256 + int(gl_LocalInvocationIndex))

/* Segment ``entry``; false when there is none (past the particles or the ring's filled points, a dead particle)
 * or an end lies behind the camera or outside its depth range. */
bool fetch_segment(int entry, out TrailSegment segment)
{
  int ring = int(trail_length);
  if (entry >= count * ring) {
    return false;
  }
  segment.index = entry / ring;
  segment.s = entry - segment.index * ring;
  if (!fetch_trail(segment.index, segment.particle, segment.trail) ||
      segment.s >= segment.trail.filled) {
    return false;
  }
  segment.near_end = transform_point(view_proj, trail_point(segment.index, segment.s, segment.trail));
  segment.far_end = transform_point(view_proj, trail_point(segment.index, segment.s + 1, segment.trail));
  vec4 near_end = segment.near_end, far_end = segment.far_end;
  return near_end.w > 0.0 && far_end.w > 0.0 && abs(near_end.z) <= near_end.w && abs(far_end.z) <= far_end.w;
}

/* The tint of the trail at t (0: head, 1: tail): towards trail_color_end, faded by trail_fade. */
vec3 trail_tint_at(float t)
{
  return mix(vec3(1.0), trail_color_end, t) * (1.0 - trail_fade * t);
}
