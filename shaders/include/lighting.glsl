/* Blender's lights as the particles see them (addon/engine/look/lighting.py states
 * the formulas and how they were checked against Blender's renders).
 *
 * Needs PI, MIN_DISTANCE_SQUARED and the Light record (records.LIGHT). */

/* Henyey-Greenstein times 4 pi: 1 at g = 0 (an isotropic particle). */
float phase_hg(float g, float cos_theta)
{
  float denominator = 1.0 + g * g - 2.0 * g * cos_theta;
  return (1.0 - g * g) / (denominator * sqrt(denominator));
}

/* Blender's spot cone: smoothstep over the blend, a hard edge without one. */
float spot_mask(Light light, float cos_theta)
{
  if (light.spot_smooth <= 0.0) {
    return cos_theta > light.spot_cos ? 1.0 : 0.0;
  }
  return smoothstep(0.0, 1.0, (cos_theta - light.spot_cos) / light.spot_smooth);
}

/* Irradiance of a rectangular area light of half sides ab on its axis at distance squared d2, per radiant. */
float rectangle_on_axis(vec2 ab, float d2)
{
  vec2 reach = sqrt(ab * ab + d2);
  return 2.0 / (PI * 4.0 * ab.x * ab.y) *
         (ab.x / reach.x * atan(ab.y / reach.x) + ab.y / reach.y * atan(ab.x / reach.y));
}

/* Irradiance at ``world`` of a surface facing ``light``; ``travel``: the unit
 * direction the light travels there; a point or spot light's radius is at
 * least ``min_radius`` (the lit particle's: finite inside the light). */
vec3 light_irradiance(Light light, vec3 world, float min_radius, out vec3 travel)
{
  travel = light.direction;
  vec3 offset = world - light.position;
  float d2 = dot(offset, offset);
  if (d2 > 0.0) {
    travel = offset * inversesqrt(d2);
  }
  float cos_theta = dot(travel, light.direction);
  float radius = max(light.radius, min_radius);
  float point = 1.0 / (4.0 * PI * max(d2 + radius * radius, MIN_DISTANCE_SQUARED));
  switch (int(light.kind)) {
    case LIGHT_TYPE_SUN:
      travel = light.direction;
      return light.radiant;
    case LIGHT_TYPE_POINT:
      return light.radiant * point;
    case LIGHT_TYPE_SPOT:
      return light.radiant * (point * spot_mask(light, cos_theta));
    case LIGHT_TYPE_AREA_DISC:
      return light.radiant *
             (max(cos_theta, 0.0) / (PI * (light.half_size.x * light.half_size.y + d2)));
    default: /* LIGHT_TYPE_AREA_RECTANGLE */
      return light.radiant * (rectangle_on_axis(light.half_size, d2) * max(cos_theta, 0.0));
  }
}
