/* An additive quad on the screen, shared by the rasterized quads (raster_quads.glsl's vertex stage) and
 * the tiled ones (quad_footprint.glsl, quad_tiles.py), so both draw the same: centred between the
 * particle's head and its tail (where it was stretch_seconds ago; with MOTION_BLUR its path over the
 * shutter too), half_length along the streak, radius_px across, lit at a pixel by color * quad_falloff
 * (quad_falloff.glsl: the round sprite swept along the streak; a textured quad's image over the rectangle).  Needs the constants of
 * raster.CONSTANTS. */

#ifdef MOTION_BLUR
bool shutter_path(vec3 position, vec3 velocity, vec2 size, out vec2 open_px, out vec2 close_px); /* footprint.glsl */
#endif
#ifdef DEPTH_OF_FIELD
float focus_blurred_px(float radius_px, float clip_w, inout float light); /* footprint.glsl */
#endif

struct QuadFrame {
  vec2 center;       /* pixels */
  vec2 along;        /* unit: the streak's direction, (1, 0) without one */
  float streak;      /* the streak's length in pixels */
  float half_length; /* along: radius_px plus half the streak */
  float radius_px;   /* across: at least a pixel, widened by the pixel filter, its tail and the circle of
                      * confusion (quad_reach_px) */
  float core;        /* the core's radius over radius_px (the filter's tail lights the rest: quad_falloff) */
  float inner2;      /* out of focus, the flat top's radius over the core's, squared (quad_defocused_px); else 0 */
  vec3 color;        /* untextured: the round sprite's (quad_falloff sweeps it along the streak, light kept);
                      * textured: the brightness spread over the longer streak (radius_px / half_length) */
};

/* Particle ``index``'s quad at clip position ``clip`` (w > 0) on a target of ``size`` pixels. */
QuadFrame quad_frame(int index, Particle particle, vec4 clip, vec2 size)
{
  vec2 head = (clip.xy / clip.w * 0.5 + 0.5) * size;
  vec2 motion = vec2(0.0);
  vec4 tail_clip = view_proj * vec4(particle.position - particle.velocity * stretch_seconds, 1.0);
  if (tail_clip.w > 0.0 && is_finite(particle.velocity)) {
    motion = head - (tail_clip.xy / tail_clip.w * 0.5 + 0.5) * size;
  }
#ifdef MOTION_BLUR
  /* Over the shutter: from where it is at open (less the stretch) to where it is at close. */
  vec2 open_px, close_px;
  if (shutter_path(particle.position, particle.velocity, size, open_px, close_px)) {
    motion += close_px - open_px;
    head = close_px;
  }
#endif
  vec4 look_now = particle_look(particle, particle.age / particle.life);
  float radius_px = particle_radius_px(index, look_now, pixel_scale, clip.w);
  /* Below one pixel the quad stays one pixel and gets darker, like the splat. */
  float coverage = pixel_coverage(radius_px);
  radius_px = max(radius_px, 1.0);
  float inner = 0.0, core = 1.0;
#ifdef SPRITE_TEXTURE
#  ifdef DEPTH_OF_FIELD
  /* Out of focus: wider, dimmer, the same light (the falloff's light goes as radius^2).  A sprite image
   * stretches over the wider quad: magnified, not blurred. */
  radius_px = focus_blurred_px(radius_px, clip.w, coverage);
#  endif
#else
  radius_px = quad_reach_px(radius_px, clip.w, coverage, inner, core); /* out of focus: the lens's disc shows */
#endif
  QuadFrame quad;
  quad.streak = length(motion);
  quad.along = quad.streak > 1e-3 ? motion / quad.streak : vec2(1.0, 0.0);
  quad.half_length = radius_px + 0.5 * quad.streak;
  quad.radius_px = radius_px;
  quad.center = head - 0.5 * motion;
  quad.core = core;
  quad.inner2 = (inner / (core * radius_px)) * (inner / (core * radius_px));
#ifdef SPRITE_TEXTURE
  quad.color = particle_color(index, look_now, coverage) * (radius_px / quad.half_length);
#else
  quad.color = particle_color(index, look_now, coverage);
#endif
  return quad;
}
