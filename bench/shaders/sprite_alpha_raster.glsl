/* The rasterized alpha sprites the tile-binned compositor replaced (a bench
 * and test peer, bench/sprite_peer.py).
 * Alpha-blended sprites: a camera-facing soft round quad per particle, blended
 * with premultiplied "over" in drawing order.  Instance i draws the particle
 * in sorted slot i: the state slot itself (a direct sort), or the slot the
 * sorted key-index pairs name (SPRITE_INDIRECT).  Colors and sizes come from
 * the look table like every other particle type (particle_look.glsl). */

#ifdef GPU_VERTEX_SHADER
const vec2 CORNERS[6] = vec2[6](vec2(-1.0, -1.0), vec2(1.0, -1.0), vec2(1.0, 1.0),
                                vec2(-1.0, -1.0), vec2(1.0, 1.0), vec2(-1.0, 1.0));

void main()
{
  int width = textureSize(pos_age, 0).x;
  int slot = gl_InstanceID;
#ifdef SPRITE_INDIRECT
  slot = int(texelFetch(indices, particle_texel(slot, width), 0).x);
#endif
  ivec2 texel = particle_texel(slot, width);
  Particle particle = load_particle(texel);
  particle.position += state_origin.xyz;
  v_color = vec4(0.0);
  v_corner = CORNERS[gl_VertexID];
  gl_Position = vec4(2.0, 2.0, 2.0, 1.0); /* outside: clipped */
  if (gl_InstanceID >= count || !particle_alive(particle)) {
    return;
  }
  vec4 clip = view_proj * vec4(particle.position, 1.0);
  if (!(clip.w > 0.0)) {
    return;
  }
  vec4 look_now = look_at(particle.age / particle.life);
  float radius_px = particle_radius_px(slot, look_now, pixel_scale, clip.w);
  /* Below one pixel the sprite stays one pixel and gets fainter. */
  float coverage = pixel_coverage(radius_px);
  radius_px = max(radius_px, 1.0);
  float alpha = opacity * coverage;
  v_color = vec4(particle_color(slot, look_now, 1.0) * alpha, alpha);
#ifdef MOTION_BLUR
  /* Stretched along its path over the shutter (footprint.glsl), the same alpha spread over the length. */
  vec2 open_px, close_px;
  if (shutter_path(particle.position, particle.velocity, target_extent, open_px, close_px)) {
    v_color *= radius_px / (radius_px + 0.5 * length(close_px - open_px));
    vec2 corner_px = capsule_corner(open_px, close_px, radius_px, v_corner);
    gl_Position = vec4((corner_px / target_extent * 2.0 - 1.0) * clip.w, clip.z, clip.w);
    return;
  }
#endif
  clip.xy += v_corner * radius_px / target_extent * 2.0 * clip.w; /* before the divide */
  gl_Position = clip;
}
#endif

#ifdef GPU_FRAGMENT_SHADER
const float FALLOFF = 4.0;

/* A Gaussian falloff that reaches zero at the rim; v_color is premultiplied. */
void main()
{
  float rim = exp(-FALLOFF);
  float soft = max(0.0, (exp(-FALLOFF * dot(v_corner, v_corner)) - rim) / (1.0 - rim));
  out_color = v_color * soft;
}
#endif
