/* The light pass: the radiance each live particle scatters toward the camera
 * (addon/engine/lighting.py states it), one RGB per particle slot into
 * particle_light, laid out like the state images.  Every kernel that draws a
 * lit effect reads it in particle_color (particle_look.glsl); dead slots get 0.
 *
 * With SHADOW_VOLUME, each light with a shadow slot is attenuated by the
 * particles between it and this one (shadow_volume.glsl). */

/* albedo x (ambient + sum of E / pi x phase x transmittance), at life
 * fraction t, for a particle of world radius ``radius``. */
vec3 scattered_radiance(vec3 world, float t, float radius)
{
  vec3 to_eye = eye - world;
  float eye_d2 = dot(to_eye, to_eye);
  vec3 view = eye_d2 > 0.0 ? to_eye * inversesqrt(eye_d2) : vec3(0.0);
#ifdef SHADOW_VOLUME
  vec4 shadow = shadow_transmittance(world);
#endif
  vec3 sum = ambient;
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
    sum += irradiance * (phase_hg(anisotropy, dot(travel, view)) * transmittance / PI);
  }
  vec3 albedo_now = albedo_birth + (albedo_death - albedo_birth) * clamp(t, 0.0, 1.0);
  return min(albedo_now * sum, vec3(RADIANCE_LIMIT));
}

void main()
{
  int width = textureSize(pos_age, 0).x;
  int index = particle_index(width);
  vec4 pos_age_in, vel_life_in;
  vec3 radiance = vec3(0.0);
  if (fetch_particle(index, pos_age_in, vel_life_in)) {
    float t = div_rn(pos_age_in.w, vel_life_in.w);
    radiance = scattered_radiance(pos_age_in.xyz, t, particle_world_radius(index, look_at(t)));
  }
  imageStore(particle_light, particle_texel(index, width), vec4(radiance, 0.0));
}
