/* R21G22B21 in ONE 64-bit word with ONE atomic add per particle (no carry
 * add): R in bits 0-20, G in 21-42, B in 43-63.  Needs 64-bit atomics on a
 * storage buffer (GL_NV_shader_atomic_int64), which Blender 5.2's Python gpu
 * API cannot reach: no storage buffers, no R64UI texture format, and its
 * GLSL rejects #extension in create-info sources.  Benchmark only. */

void main()
{
  int width = imageSize(pos_age).x;
  int index = particle_index(width);
  if (index >= count) {
    return;
  }
  ivec2 texel = particle_texel(index, width);
  Particle particle = load_particle(texel);
  particle.position += state_origin.xyz;
  if (!particle_alive(particle)) {
    return;
  }
  vec4 clip = view_proj * vec4(particle.position, 1.0);
  if (!(clip.w > 0.0 && all(lessThanEqual(abs(clip.xyz), vec3(clip.w))))) {
    return;
  }
  precise vec2 screen = (clip.xy / clip.w * 0.5 + 0.5) * vec2(target_size);
  ivec2 pixel = min(ivec2(screen), target_size - 1);
  vec4 look_now = look_at(particle.age / particle.life);
  float radius_px = particle_radius_px(index, look_now, pixel_scale, clip.w);
  vec3 color = particle_color(index, look_now, pixel_coverage(radius_px));
  vec3 scaled = clamp(color * quantize_scale, vec3(0.0), vec3(float(R_MAX), float(G_MAX), float(R_MAX)));
  uvec3 q = uvec3(scaled + 0.5);
  uint64_t add = uint64_t(q.r) | (uint64_t(q.g) << 21) | (uint64_t(q.b) << 43);
  uint64_t old = atomicAdd(accum64[pixel.y * target_size.x + pixel.x], add);
  uint64_t r = old & 0x1FFFFFul, g = (old >> 21) & 0x3FFFFFul, b = old >> 43;
  if (r + q.r > 0x1FFFFFul || g + q.g > 0x3FFFFFul || b + q.b > 0x1FFFFFul) {
    imageAtomicAdd(stats, ivec2(0, 0), 1u);
  }
}
