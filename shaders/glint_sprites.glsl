/* Glint sprites: a star (or a lens flare: a star with a soft halo and a ring)
 * drawn additively on every bright point glint_extract appended, into the
 * glint layer.  One instanced quad per tile of the frame (the most points
 * there can be); instances past the GPU's count are clipped away, so the
 * count never travels to the CPU.
 *
 * A point lights its glint with the part of its luminance above the
 * threshold, in its own colour (glint_look.z: 1) or white (0). */

#ifdef GPU_VERTEX_SHADER
const vec2 CORNERS[6] = vec2[6](vec2(-1.0, -1.0), vec2(1.0, -1.0), vec2(1.0, 1.0),
                                vec2(-1.0, -1.0), vec2(1.0, 1.0), vec2(-1.0, 1.0));

void main()
{
  v_color = vec3(0.0);
  v_offset = vec2(0.0);
  gl_Position = vec4(2.0, 2.0, 2.0, 1.0); /* outside: clipped */
  uint count = texelFetch(glint_count, ivec2(0, 0), 0).x;
  if (uint(gl_InstanceID) >= min(count, uint(list_capacity))) {
    return;
  }
  ivec2 at = ivec2((gl_InstanceID % list_width) * 2, gl_InstanceID / list_width);
  vec4 color_lum = texelFetch(glint_list, at, 0);
  vec2 pixel = texelFetch(glint_list, at + ivec2(1, 0), 0).xy;
  float lum = color_lum.w;
  float above = (lum - glint_look.y) / lum; /* the share of the pixel above the threshold */
  vec3 tint = mix(vec3(lum), color_lum.rgb, glint_look.z);
  v_color = tint * above * glint_look.x;
  float length_px = glint_shape.x;
  v_offset = CORNERS[gl_VertexID] * length_px;
  vec2 size = vec2(target_size);
  gl_Position = vec4((pixel + 0.5 + v_offset) / size * 2.0 - 1.0, 0.0, 1.0);
}
#endif

#ifdef GPU_FRAGMENT_SHADER
const float PI = 3.14159265;

/* Thin rays fading to their tips, thickness in pixels: glint_look.w. */
float rays(vec2 p, float length_px)
{
  float r = length(p);
  float sector = 2.0 * PI / glint_shape.z;
  float angle = atan(p.y, p.x) - glint_shape.y;
  float off_ray = angle - sector * round(angle / sector);
  float across = r * abs(sin(off_ray)) / glint_look.w;
  float along = r * cos(off_ray) / length_px;
  if (along <= 0.0 || along >= 1.0) {
    return 0.0;
  }
  float fade = (1.0 - along) * (1.0 - along);
  return fade * exp(-across * across);
}

void main()
{
  float length_px = glint_shape.x;
  float r = length(v_offset);
  float core = exp(-r * r / (glint_look.w * glint_look.w * 2.0));
  float light = core + rays(v_offset, length_px);
  if (glint_shape.w > 0.5) { /* flare: a soft halo and a faint ring at 70% of the rays */
    float halo = r / (0.3 * length_px);
    float ring = (r / length_px - 0.7) / 0.03;
    light += 0.25 * exp(-halo * halo) + 0.06 * exp(-ring * ring);
  }
  out_color = vec4(v_color * light, 0.0);
}
#endif
