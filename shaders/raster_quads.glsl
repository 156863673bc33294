/* Larger particles: a camera-facing quad per index (two triangles), round with a soft edge; an instance
 * draws QUADS_PER_INSTANCE particles in a row (gl_VertexID / 6 among them, gl_VertexID % 6 the corner): a
 * 6-vertex instance a index left most lanes of each vertex warp idle (raster.py).
 * Its frame (quad_frame.glsl, shared with the tiled quads of quad_tiles.py): with a stretch time the quad
 * spans the index's screen motion over that time behind it, and its brightness is spread over the
 * longer streak; with MOTION_BLUR its path over the shutter too, with DEPTH_OF_FIELD it widens by its
 * circle of confusion (footprint.glsl, footprint.DEPTH_OF_FIELD).  SPRITE_TEXTURE
 * (sprite_sheets.TEXTURED_QUADS): the effect's sprite image instead of the round falloff, turned by its pose;
 * SPRITE_RELIEF (sprite_sheets.RELIEF_QUADS): shaded by where its light comes from and the sheet's normals,
 * as sprite_blend.glsl shades alpha sprites. */

#ifdef SPRITE_TEXTURE
/* flipbook.glsl's fetch: this effect's one sheet and its vectors (both stages: each links
 * flipbook_texel). */
vec4 sheet_fetch(int slot, bool vectors, vec2 uv)
{
  return vectors ? textureLod(sheet_vectors, uv, 0.0) : textureLod(sheet_image, uv, 0.0);
}
#endif
#ifdef SPRITE_RELIEF
vec2 sheet_normal_fetch(int slot, vec2 uv)
{
  return normal_of(textureLod(sheet_normals, uv, 0.0));
}
#endif

#ifdef GPU_VERTEX_SHADER
const vec2 CORNERS[6] = vec2[6](vec2(-1.0, -1.0), vec2(1.0, -1.0), vec2(1.0, 1.0),
                                vec2(-1.0, -1.0), vec2(1.0, 1.0), vec2(-1.0, 1.0));

void main()
{
  v_color = vec3(0.0);
  v_sweep = vec4(1.0, 0.0, 0.0, 1.0);
  int index = gl_InstanceID * QUADS_PER_INSTANCE + gl_VertexID / 6;
  v_corner = CORNERS[gl_VertexID % 6];
#ifdef SPRITE_TEXTURE
  v_frame = 0.0;
#endif
#ifdef SPRITE_RELIEF
  v_lights = vec2(0.0);
#endif
  gl_Position = vec4(2.0, 2.0, 2.0, 1.0); /* outside: clipped */
  Particle particle;
  if (index >= count || !fetch_particle(index, particle)) {
    return;
  }
  vec4 clip = view_proj * vec4(particle.position, 1.0);
  if (!(clip.w > 0.0)) {
    return;
  }
  vec2 size = target_extent;
  QuadFrame quad = quad_frame(index, particle, clip, size);
  vec2 along = quad.along;
#ifdef SPRITE_TEXTURE
  /* A textured quad turns by its pose unless a streak already lays it along the motion. */
  v_frame = flipbook_position(index, particle.age, particle.life);
  if (!(quad.streak > 1e-3)) {
    float angle = sprite_angle(index, particle.age, screen_velocity(clip, particle.velocity, size));
    along = vec2(cos(angle), sin(angle));
  }
#endif
#ifdef SPRITE_RELIEF
  /* Where the light comes from, on the quad's axes (along, across), times the relief. */
  int width = textureSize(particle_light_direction, 0).x;
  vec2 seen = texelFetch(particle_light_direction, particle_texel(index, width), 0).xy * sprite_relief;
  v_lights = vec2(along.x * seen.x + along.y * seen.y, along.x * seen.y - along.y * seen.x);
#endif
  vec2 across = vec2(-along.y, along.x);
  vec2 corner_px = quad.center + along * (v_corner.x * quad.half_length) + across * (v_corner.y * quad.radius_px);
  v_color = quad.color;
  v_sweep = vec4(quad.half_length / quad.radius_px, 0.5 * quad.streak / quad.radius_px, quad.inner2, quad.core);
  gl_Position = vec4((corner_px / size * 2.0 - 1.0) * clip.w, clip.z, clip.w);
}
#endif

#ifdef GPU_FRAGMENT_SHADER
void main()
{
#ifdef SPRITE_TEXTURE
  /* The sprite image over the quad (v_corner: -1 to 1 along and across), its alpha shaping the light added. */
#ifdef SPRITE_RELIEF
  FlipbookFrames f = flipbook_frames(sheet_grid, v_frame);
  FlipbookUvs at = flipbook_uvs(0, sheet_grid, f, v_corner * 0.5 + 0.5);
  vec4 texel = flipbook_sample(0, at, f.mixed);
  texel.rgb *= max(0.0, 1.0 + dot(flipbook_normal(0, at, f.mixed), v_lights));
#else
  vec4 texel = flipbook_texel(0, sheet_grid, v_frame, v_corner * 0.5 + 0.5);
#endif
  out_color = vec4(v_color * texel.rgb * texel.a, 0.0);
#else
  float falloff = quad_falloff(v_corner.x * v_sweep.x, v_corner.y, v_sweep.y, v_sweep.z, v_sweep.w);
  if (falloff <= 0.0) {
    discard;
  }
  out_color = vec4(v_color * falloff, 0.0);
#endif
}
#endif
