/* An additive quad's falloff (quad_frame.glsl), shared by the rasterized quads' fragments
 * (raster_quads.glsl) and the tiled quads' pixels (quad_accumulate.glsl). */

/* The falloff at a point of the quad, ``corner`` its coordinates along and across over (half_length,
 * radius_px): 1 at the centre, 0 on the ellipse's rim, below 0 beyond it (nothing drawn there). */
float quad_falloff(vec2 corner)
{
  return 1.0 - dot(corner, corner);
}
