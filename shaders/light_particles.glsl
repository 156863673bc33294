/* The light pass: the radiance each live particle scatters toward the camera
 * (addon/engine/look/lighting.py states it), one RGB per particle slot into
 * particle_light, laid out like the state images.  Every kernel that draws a
 * lit effect reads it in particle_color (particle_look.glsl); dead slots get 0.
 *
 * With SHADOW_VOLUME, each light with a shadow slot is attenuated by the
 * particles between it and this one (shadow_volume.glsl).  With
 * LIGHT_DIRECTION (light_pass.py, for effects with relief: sprite_sheets.has_relief),
 * where the light comes from into particle_light_direction too: the lights' directions toward the light
 * weighted by what each adds to the radiance (its luminance), over that and
 * the ambient's, on the camera's right and up axes (lit_right, lit_up). */

const vec3 LUMINANCE = vec3(0.2126, 0.7152, 0.0722); /* Rec. 709 */

/* albedo x (ambient + sum of E / pi x phase x transmittance), the albedo at
 * t (color_t: the life fraction, or by speed), for a particle of world radius ``radius``; ``toward``: the lights'
 * directions toward them weighted by their luminance in the sum (in world space),
 * ``weight``: the sum's luminance. */
vec3 scattered_radiance(vec3 world, float t, float radius, out vec3 toward, out float weight)
{
  vec3 to_eye = eye - world;
  float eye_d2 = dot(to_eye, to_eye);
  vec3 view = eye_d2 > 0.0 ? to_eye * inversesqrt(eye_d2) : vec3(0.0);
#ifdef SHADOW_VOLUME
  vec4 shadow = shadow_transmittance(world);
#endif
  vec3 sum = ambient;
  toward = vec3(0.0);
  for (int i = 0; i < light_count; i++) {
    Light light = load_light(i);
    vec3 travel;
    vec3 irradiance = light_irradiance(light, world, radius, travel);
    float transmittance = 1.0;
#ifdef SHADOW_VOLUME
    if (light.shadow_slot >= 0.0) {
      transmittance = shadow[int(light.shadow_slot)];
    }
#endif
    vec3 scattered = irradiance * (phase_hg(anisotropy, dot(travel, view)) * transmittance / PI);
    sum += scattered;
    toward -= travel * dot(scattered, LUMINANCE);
  }
  weight = dot(sum, LUMINANCE);
  vec3 albedo_now = albedo_birth + (albedo_death - albedo_birth) * clamp(t, 0.0, 1.0);
  return min(albedo_now * sum, vec3(RADIANCE_LIMIT));
}

void main()
{
  int width = textureSize(pos_age, 0).x;
  int index = particle_index(width);
  Particle particle;
  vec3 radiance = vec3(0.0), toward = vec3(0.0);
  float weight = 0.0;
  if (fetch_particle(index, particle)) {
    float t = div_rn(particle.age, particle.life);
    radiance = scattered_radiance(particle.position, color_t(particle, t), particle_world_radius(index, look_at(t)),
                                  toward, weight);
  }
  imageStore(particle_light, particle_texel(index, width), vec4(radiance, 0.0));
#ifdef LIGHT_DIRECTION
  vec2 seen = weight > 0.0 ? vec2(dot(toward, lit_right.xyz), dot(toward, lit_up.xyz)) / weight : vec2(0.0);
  imageStore(particle_light_direction, particle_texel(index, width), vec4(seen, 0.0, 0.0));
#endif
}
