/* What a live particle looks like, shared by the splat kernels and the
 * rasterized types so that every path draws the same colors and sizes.
 *
 * Needs look.glsl (look_at, particle_look, variation) and the look constants (look.py):
 * emission_strength, world_radius, brightness_random, size_random, color_per_speed, look_seed;
 * with PARTICLE_LIGHT (lighting.lit_variant) the sampler particle_light; with
 * PARTICLE_TINT (lighting.tinted_variant) the sampler particle_tint. */

/* World radius of particle ``index`` at its age (the shadow volume splats its cross-section). */
float particle_world_radius(int index, vec4 look_now)
{
  precise float radius = world_radius * look_now.w * variation(index, size_random, STREAM_SIZE);
  return radius;
}

/* Projected radius in pixels of particle ``index`` at clip w. */
float particle_radius_px(int index, vec4 look_now, float pixels_per_unit, float clip_w)
{
  precise float world = particle_world_radius(index, look_now) * pixels_per_unit;
  return div_rn(world, clip_w);
}

/* The projected disc area in pixels, clamped at one pixel: far particles
 * get darker instead of flickering. */
float pixel_coverage(float radius_px)
{
  precise float area = 3.14159265 * radius_px * radius_px;
  return min(area, 1.0);
}

/* An additive quad's 1 - d^2 falloff is read at pixel centres, where a renderer integrates each pixel through
 * its filter (Cycles: a 1.5 px Blackman-Harris over the pixel's samples), so a quad of a pixel or two
 * aliased and stood out sharper and brighter than the same sprite rendered by Cycles.  Widening the disc to
 * sqrt(r^2 + PIXEL_FILTER_PX^2) adds that integration's spread (this falloff's variance is r^2 / 6: the
 * widening adds 1/6 px^2, about a pixel's box, 1/12, plus the filter's), with the light dimmed by the area
 * ratio so the quad adds the same light.  Chosen against Cycles at 1080p (bench/fidelity.py, embers and
 * snow: mean FLIP of a crop 0.27 -> 0.13 and 0.42 -> 0.27; 0.5 and 1.3 px did worse than 1). */
const float PIXEL_FILTER_PX = 1.0;

float quad_filtered_px(float radius_px, inout float light)
{
  precise float filtered2 = radius_px * radius_px + PIXEL_FILTER_PX * PIXEL_FILTER_PX;
  float filtered = sqrt(filtered2);
  light *= (radius_px / filtered) * (radius_px / filtered);
  return filtered;
}

/* The filter's tail: Cycles' Blackman-Harris reaches 1.5 px beyond what it filters, so its faint rim of light around a
 * small or out-of-focus sprite reaches past the widened 1 - d^2 disc, and an HDR comparison (FLIP, whose exposures
 * reach 2^24 on a dark frame) sees every pixel lit by one and not the other. So a quad adds FILTER_TAIL_LIGHT
 * (quad_falloff.glsl) of its light as a second, wider 1 - d^2 bump out to FILTER_TAIL_SCALE r + FILTER_TAIL_PX (plus
 * the circle of confusion): r is the sharp radius, FILTER_TAIL_SCALE r the radius of the flat disc of the same light
 * (bench/fidelity.py's QUAD_ENERGY). Chosen against Cycles at 1080p (crops of snow and embers, mean FLIP 0.288 -> 0.170
 * and 0.175 -> 0.148; tails of 0.6 and 1.0 px or 2-20% of the light did worse). */
const float FILTER_TAIL_SCALE = 0.70710678;
const float FILTER_TAIL_PX = 0.8;

#ifdef DEPTH_OF_FIELD
float quad_defocused_px(float radius_px, float clip_w, inout float light, out float inner); /* footprint.glsl */
float coc_radius_px(float clip_w); /* footprint.glsl */
#endif

/* An untextured additive quad's reach in pixels from its sharp radius (at least a pixel) at clip w `clip_w`:
 * the core, widened by the pixel filter (and with DEPTH_OF_FIELD by the circle of confusion, flat out to
 * `inner`: quad_defocused_px), is `core` of it, the filter's tail (quad_falloff) the rest; `light` is dimmed
 * by the core's widening. */
float quad_reach_px(float sharp_px, float clip_w, inout float light, out float inner, out float core)
{
  float radius = quad_filtered_px(sharp_px, light);
  float tail = FILTER_TAIL_SCALE * sharp_px + FILTER_TAIL_PX;
  inner = 0.0;
#ifdef DEPTH_OF_FIELD
  radius = quad_defocused_px(radius, clip_w, light, inner);
  tail += coc_radius_px(clip_w);
#endif
  float reach = max(radius, tail);
  core = radius / reach;
  return reach;
}

#ifdef PARTICLE_LIGHT
/* A lit effect's radiance: what the light pass wrote for slot ``index``
 * (light_particles.glsl) plus the emission (Lit effects pack an
 * emission_strength of 0: look.particle_values). */
vec3 lit_radiance(int index, vec4 look_now)
{
  vec3 light = texelFetch(particle_light, particle_texel(index, textureSize(particle_light, 0).x), 0).rgb;
  return look_now.rgb * emission_strength + light;
}
#endif

#ifdef PARTICLE_TINT
/* The look with a spawned particle's inherited color: its tint (spawn_tint.glsl: rgb the parent's color at the
 * event, a the fraction inherited) mixed into its own color over life. */
vec4 tinted(int index, vec4 look_now)
{
  vec4 tint = texelFetch(particle_tint, particle_texel(index, textureSize(particle_tint, 0).x), 0);
  precise vec3 color = look_now.rgb + (tint.rgb - look_now.rgb) * tint.a;
  return vec4(color, look_now.a);
}
#endif

/* HDR color: the look's color (with PARTICLE_TINT: mixed with the parent's) times strength (lit: the light it
 * scatters), brightness variation and coverage. */
vec3 particle_color(int index, vec4 look_now, float coverage)
{
#ifdef PARTICLE_TINT
  look_now = tinted(index, look_now);
#endif
#ifdef PARTICLE_LIGHT
  precise vec3 color = lit_radiance(index, look_now) * (variation(index, brightness_random, STREAM_BRIGHTNESS) * coverage);
#else
  precise vec3 color = look_now.rgb * (emission_strength * variation(index, brightness_random, STREAM_BRIGHTNESS) * coverage);
#endif
  return color;
}

/* Whether particle ``index`` adds any light (a lit one: scatters any): only those mark the particle depth. */
bool particle_shows(int index, vec4 look_now)
{
#ifdef PARTICLE_TINT
  look_now = tinted(index, look_now);
#endif
#ifdef PARTICLE_LIGHT
  vec3 radiance = lit_radiance(index, look_now);
  return max(radiance.r, max(radiance.g, radiance.b)) > 0.0;
#else
  return emission_strength * max(look_now.r, max(look_now.g, look_now.b)) > 0.0;
#endif
}
