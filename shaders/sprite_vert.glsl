/* Vertex pulling for alpha-blended sprites: instance i draws the particle in
 * sorted slot i (through the sorted indices with SPRITE_INDIRECT) as a
 * camera-facing quad, so instance order is drawing order.  Particles that do
 * not show collapse outside the clip volume. */

void main()
{
  int width = textureSize(pos_age, 0).x;
  int slot = gl_InstanceID;
#ifdef SPRITE_INDIRECT
  slot = int(texelFetch(indices, particle_texel(slot, width), 0).x);
#endif
  ivec2 texel = particle_texel(slot, width);
  vec4 pos_age_in = texelFetch(pos_age, texel, 0);
  float life = texelFetch(vel_life, texel, 0).w;
  v_corner = corner;
  if (!(pos_age_in.w >= 0.0 && pos_age_in.w < life) || !is_finite(pos_age_in.xyz)) {
    v_color = vec4(0.0);
    gl_Position = vec4(0.0, 0.0, 2.0, 1.0);
    return;
  }
  float t = pos_age_in.w / life;
  vec4 clip = view_proj * vec4(pos_age_in.xyz + state_origin.xyz, 1.0);
  /* Before the divide: perspective size; sprite_scale.z is the size at death as a fraction. */
  clip.xy += corner * sprite_scale.xy * (1.0 + (sprite_scale.z - 1.0) * t);
  gl_Position = clip;
  v_color = vec4((color_start.rgb + (color_end.rgb - color_start.rgb) * t) * color_start.w, color_end.w);
}
