/* A random direction within a cone (simulate.glsl emits in one, spawn_events.glsl spreads inherited
 * velocities in one). */

/* Unit vector at most acos(cos_max) away from `axis` (unit), uniform over the cap. */
vec3 random_in_cone(vec3 axis, float cos_max, float u, float v)
{
  float cos_theta = 1.0 - u * (1.0 - cos_max);
  float sin_theta = sqrt(max(0.0, 1.0 - cos_theta * cos_theta));
  vec3 helper = abs(axis.z) < 0.9 ? vec3(0.0, 0.0, 1.0) : vec3(1.0, 0.0, 0.0);
  vec3 tangent = normalize(cross(helper, axis));
  vec3 bitangent = cross(axis, tangent);
  float phi = 6.28318530718 * v;
  return axis * cos_theta + (tangent * cos(phi) + bitangent * sin(phi)) * sin_theta;
}
