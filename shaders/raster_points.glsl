/* The rasterized peer of the splat: one single-pixel GL_POINT per particle,
 * added into a half-float target.  Same cull, color and coverage as the
 * splat; dead and non-finite particles are moved outside the clip volume. */

#ifdef GPU_VERTEX_SHADER
void main()
{
  v_color = vec3(0.0);
  gl_Position = vec4(2.0, 2.0, 2.0, 1.0); /* outside: clipped */
  Particle particle;
  if (!fetch_particle(gl_VertexID, particle)) {
    return;
  }
  float life = particle.life;
  vec4 clip = view_proj * vec4(particle.position, 1.0);
  if (clip.w > 0.0) {
    vec4 look_now = particle_look(particle, particle.age / life);
    float radius_px = particle_radius_px(gl_VertexID, look_now, pixel_scale, clip.w);
    v_color = particle_color(gl_VertexID, look_now, pixel_coverage(radius_px));
    gl_Position = clip;
  }
}
#endif

#ifdef GPU_FRAGMENT_SHADER
void main()
{
  out_color = vec4(v_color, 0.0); /* the resolve derives alpha from the sum */
}
#endif
