/* Glint sprites: a star (or a lens flare: a star with a soft halo and a ring)
 * drawn additively on every bright point glint_extract found, into the
 * glint layer.  One instance per tile of the frame, in tile order (the
 * additive half-float blends of overlapping stars round the same every run);
 * a tile without a point (zero luminance in its slot) is clipped away.
 *
 * An instance is one quad per ray, thin and as long as the ray, plus a
 * quad for the core (for a flare, one covering the halo and the ring):
 * fragments only where there is light.  Each quad adds its own term, so
 * where they overlap (the center) the terms sum as one star would.
 *
 * A point lights its glint with the part of its luminance above the
 * threshold, in its own colour (glint_tint 1) or white (0).  The list's
 * layout: include/glint_list.glsl. */

#ifdef GPU_VERTEX_SHADER
const vec2 CORNERS[6] = vec2[6](vec2(-1.0, -1.0), vec2(1.0, -1.0), vec2(1.0, 1.0),
                                vec2(-1.0, -1.0), vec2(1.0, 1.0), vec2(-1.0, 1.0));
const float PI = 3.14159265;
const float TAIL = 3.0; /* ray and core quads reach this many thicknesses past their light */

void main()
{
  v_color = vec3(0.0);
  v_offset = vec2(0.0);
  v_ray = vec2(0.0);
  gl_Position = vec4(2.0, 2.0, 2.0, 1.0); /* outside: clipped */
  ivec2 at = glint_texel(uint(gl_InstanceID));
  vec4 color_lum = texelFetch(glint_list, at, 0);
  float lum = color_lum.w;
  if (!(lum > 0.0)) {
    return; /* no point in this tile */
  }
  vec2 pixel = texelFetch(glint_list, at + ivec2(1, 0), 0).xy;
  float above = (lum - glint_threshold) / lum; /* the share of the pixel above the threshold */
  v_color = mix(vec3(lum), color_lum.rgb, glint_tint) * above * glint_intensity;

  int quad = gl_VertexID / 6;
  vec2 corner = CORNERS[gl_VertexID % 6];
  if (quad == 0) { /* the core, or the flare's halo and ring */
    float half_size = flare > 0.5 ? ray_length : 1.5 * TAIL * ray_thickness;
    v_offset = corner * half_size;
  }
  else { /* ray quad - 1: from the center out to its length */
    float angle = ray_rotation + float(quad - 1) * 2.0 * PI / ray_count;
    v_ray = vec2(cos(angle), sin(angle));
    vec2 across = vec2(-v_ray.y, v_ray.x);
    float along = mix(-TAIL * ray_thickness, ray_length, corner.x * 0.5 + 0.5);
    v_offset = v_ray * along + across * (corner.y * TAIL * ray_thickness);
  }
  vec2 size = vec2(target_size);
  gl_Position = vec4((pixel + 0.5 + v_offset) / size * 2.0 - 1.0, 0.0, 1.0);
}
#endif

#ifdef GPU_FRAGMENT_SHADER
void main()
{
  float light = 0.0;
  if (dot(v_ray, v_ray) > 0.25) { /* a thin ray fading to its tip */
    float along = dot(v_offset, v_ray) / ray_length;
    float across = dot(v_offset, vec2(-v_ray.y, v_ray.x)) / ray_thickness;
    if (along > 0.0 && along < 1.0) {
      light = (1.0 - along) * (1.0 - along) * exp(-across * across);
    }
  }
  else {
    float r = length(v_offset);
    light = exp(-r * r / (2.0 * ray_thickness * ray_thickness));
    if (flare > 0.5) { /* flare: a soft halo and a faint ring at 70% of the rays */
      float halo = r / (0.3 * ray_length);
      float ring = (r / ray_length - 0.7) / 0.03;
      light += 0.25 * exp(-halo * halo) + 0.06 * exp(-ring * ring);
    }
  }
  out_color = vec4(v_color * light, 0.0);
}
#endif
