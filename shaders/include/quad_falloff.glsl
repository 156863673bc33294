/* An additive quad's falloff (quad_frame.glsl), shared by the rasterized quads' fragments
 * (raster_quads.glsl) and the tiled quads' pixels (quad_accumulate.glsl): the round sprite's 1 - d^2 at
 * (u, v) radii from the middle of its streak (u along it, v across), swept along the streak's +-h radii,
 * with a share of its light in the pixel filter's tail (quad_reach_px); 0 beyond it (nothing drawn there). */

const float FILTER_TAIL_LIGHT = 0.1; /* the share of a quad's light in the filter's tail (particle_look.glsl) */

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
float core_falloff(float u, float v, float h, float inner2)
{
  float falloff = swept_falloff(u, v, h);
  if (inner2 > 0.0) {
    float scale = inversesqrt(inner2);
    falloff = (falloff - inner2 * max(swept_falloff(u * scale, v * scale, h * scale), 0.0)) / (1.0 - inner2);
  }
  return falloff;
}

/* The quad's falloff at (u, v) of its radii: the core (core_falloff, `core` radii wide) with FILTER_TAIL_LIGHT
 * of its light moved into the filter's tail, a 1 - d^2 bump over the whole quad (quad_reach_px); both swept
 * along the path. */
float quad_falloff(float u, float v, float h, float inner2, float core)
{
  float scale = 1.0 / core;
  float center = max(core_falloff(u * scale, v * scale, h * scale, inner2), 0.0);
  float tail = max(swept_falloff(u, v, h), 0.0) * (1.0 + inner2) * core * core;
  return mix(center, tail, FILTER_TAIL_LIGHT);
}
