/* The kept samples as splat particles: position (moved along the normal by an
 * optional animated noise that makes the cloud glitter) and a shade in
 * [0, 1) from the normal, which the splat maps onto its color gradient
 * (age / life).  Slots past the sample count are marked never born. */

void main()
{
  int index;
  ivec2 texel;
  if (!particle_slot(imageSize(sample_pos).x, bound, index, texel)) {
    return;
  }
  if (index >= int(imageLoad(sample_count, ivec2(0)).x)) {
    imageStore(vel_life, texel, vec4(0.0));
    return;
  }
  vec4 p = imageLoad(sample_pos, texel);
  vec3 normal = imageLoad(sample_attr, texel).xyz;
  float phase = 6.28318530718 * random_unit(uint(index), uint(p.w), CSG_STREAM_GLITTER);
  vec3 position = p.xyz + normal * (glitter_amount * sin(glitter_speed * time + phase));
  float shade = 0.5 - 0.4999 * dot(normal, light.xyz);
  store_particle(texel, Particle(position, shade, vec3(0.0), 1.0));
}
