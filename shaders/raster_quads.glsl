/* Larger particles: a camera-facing quad per particle (two triangles), round with a soft edge; an instance
 * draws QUADS_PER_INSTANCE particles in a row (gl_VertexID / 6 among them, gl_VertexID % 6 the corner): a
 * 6-vertex instance a particle left most lanes of each vertex warp idle (raster.py).
 * With a stretch time the quad spans the particle's screen motion over that
 * time behind it, and its light is the round sprite's averaged along that path (swept_falloff); with
 * MOTION_BLUR its path over the shutter too, with DEPTH_OF_FIELD it spreads over
 * its circle of confusion (footprint.glsl's quad_defocused_px, footprint.focus_variant).  SPRITE_TEXTURE
 * (sprite_sheets.textured_quads): the effect's sprite image instead of the round falloff, turned by its pose. */

#ifdef SPRITE_TEXTURE
/* flipbook.glsl's fetch: this effect's one sheet and its vectors (both stages: each links
 * flipbook_texel). */
vec4 sheet_fetch(int slot, bool vectors, vec2 uv)
{
  return vectors ? textureLod(sheet_vectors, uv, 0.0) : textureLod(sheet_image, uv, 0.0);
}
#endif

#ifdef GPU_VERTEX_SHADER
const vec2 CORNERS[6] = vec2[6](vec2(-1.0, -1.0), vec2(1.0, -1.0), vec2(1.0, 1.0),
                                vec2(-1.0, -1.0), vec2(1.0, 1.0), vec2(-1.0, 1.0));

void main()
{
  v_color = vec3(0.0);
  v_sweep = vec3(1.0, 0.0, 0.0);
  int particle = gl_InstanceID * QUADS_PER_INSTANCE + gl_VertexID / 6;
  v_corner = CORNERS[gl_VertexID % 6];
#ifdef SPRITE_TEXTURE
  v_frame = 0.0;
#endif
  gl_Position = vec4(2.0, 2.0, 2.0, 1.0); /* outside: clipped */
  vec4 pos_age_in, vel_life_in;
  if (particle >= count || !fetch_particle(particle, pos_age_in, vel_life_in)) {
    return;
  }
  vec4 clip = view_proj * vec4(pos_age_in.xyz, 1.0);
  if (!(clip.w > 0.0)) {
    return;
  }
  vec2 size = target_extent;
  vec2 head = (clip.xy / clip.w * 0.5 + 0.5) * size;
  vec2 motion = vec2(0.0);
  vec4 tail_clip = view_proj * vec4(pos_age_in.xyz - vel_life_in.xyz * stretch_seconds, 1.0);
  if (tail_clip.w > 0.0 && is_finite(vel_life_in.xyz)) {
    motion = head - (tail_clip.xy / tail_clip.w * 0.5 + 0.5) * size;
  }
#ifdef MOTION_BLUR
  /* Over the shutter: from where it is at open (less the stretch) to where it is at close. */
  vec2 open_px, close_px;
  if (shutter_path(pos_age_in.xyz, vel_life_in.xyz, size, open_px, close_px)) {
    motion += close_px - open_px;
    head = close_px;
  }
#endif
  vec4 look_now = look_at(pos_age_in.w / vel_life_in.w);
  float radius_px = particle_radius_px(particle, look_now, pixel_scale, clip.w);
  /* Below one pixel the quad stays one pixel and gets darker, like the splat. */
  float coverage = pixel_coverage(radius_px);
  radius_px = max(radius_px, 1.0);
#ifdef SPRITE_TEXTURE
#  ifdef DEPTH_OF_FIELD
  /* Out of focus: wider, dimmer, the same light (the falloff's light goes as radius^2).  A sprite image
   * stretches over the wider quad: magnified, not blurred. */
  radius_px = focus_blurred_px(radius_px, clip.w, coverage);
#  endif
#else
  radius_px = quad_filtered_px(radius_px, coverage);
  float inner = 0.0; /* out of focus: the flat top's radius (quad_defocused_px) */
#  ifdef DEPTH_OF_FIELD
  radius_px = quad_defocused_px(radius_px, clip.w, coverage, inner);
#  endif
#endif
  float streak = length(motion);
  vec2 along = streak > 1e-3 ? motion / streak : vec2(1.0, 0.0);
#ifdef SPRITE_TEXTURE
  /* A textured quad turns by its pose unless a streak already lays it along the motion. */
  v_frame = flipbook_position(particle, pos_age_in.w, vel_life_in.w);
  if (!(streak > 1e-3)) {
    float angle = sprite_angle(particle, pos_age_in.w, screen_velocity(clip, vel_life_in.xyz, size));
    along = vec2(cos(angle), sin(angle));
  }
#endif
  vec2 across = vec2(-along.y, along.x);
  float half_length = radius_px + 0.5 * streak;
  vec2 center = head - 0.5 * motion;
  vec2 corner_px = center + along * (v_corner.x * half_length) + across * (v_corner.y * radius_px);
#ifdef SPRITE_TEXTURE
  v_color = particle_color(particle, look_now, coverage) * (radius_px / half_length); /* spread over the streak */
#else
  v_color = particle_color(particle, look_now, coverage);
  v_sweep = vec3(half_length / radius_px, 0.5 * streak / radius_px, (inner / radius_px) * (inner / radius_px));
#endif
  gl_Position = vec4((corner_px / size * 2.0 - 1.0) * clip.w, clip.z, clip.w);
}
#endif

#ifdef GPU_FRAGMENT_SHADER
/* The round sprite's 1 - d^2 averaged along its path, at (u, v) radii from the path's middle (u along it, v
 * across) for a path reaching `h` radii either way: what the sprite adds over the shutter (or the stretch)
 * when it moves evenly, as a renderer's motion blur sees it (a streak's ends round and soft, its middle
 * even; the quad's own ellipse tapered to points).  The integral of a^2 - (u - s)^2 over the path's s
 * within a = sqrt(1 - v^2) of u, over the path's length 2h; 1 - u^2 - v^2 standing still. */
float swept_falloff(float u, float v, float h)
{
  float a2 = 1.0 - v * v;
  if (h < 1e-3 || a2 <= 0.0) {
    return a2 - u * u;
  }
  float a = sqrt(a2);
  float s0 = max(-h, u - a) - u, s1 = min(h, u + a) - u;
  return s1 > s0 ? (a2 * (s1 - s0) - (s1 * s1 * s1 - s0 * s0 * s0) / 3.0) / (2.0 * h) : 0.0;
}

/* swept_falloff of the falloff flat out to sqrt(inner2) radii and falling as 1 - d^2 beyond
 * (quad_defocused_px): the difference of two bumps, 1 - d^2 and inner2 - d^2 where positive, over 1 - inner2. */
float quad_falloff(float u, float v, float h, float inner2)
{
  float falloff = swept_falloff(u, v, h);
  if (inner2 > 0.0) {
    float scale = inversesqrt(inner2);
    falloff = (falloff - inner2 * max(swept_falloff(u * scale, v * scale, h * scale), 0.0)) / (1.0 - inner2);
  }
  return falloff;
}

void main()
{
#ifdef SPRITE_TEXTURE
  /* The sprite image over the quad (v_corner: -1 to 1 along and across), its alpha shaping the light added. */
  vec4 texel = flipbook_texel(0, sheet_grid, v_frame, v_corner * 0.5 + 0.5);
  out_color = vec4(v_color * texel.rgb * texel.a, 0.0);
#else
  float falloff = quad_falloff(v_corner.x * v_sweep.x, v_corner.y, v_sweep.y, v_sweep.z);
  if (falloff <= 0.0) {
    discard;
  }
  out_color = vec4(v_color * falloff, 0.0);
#endif
}
#endif
