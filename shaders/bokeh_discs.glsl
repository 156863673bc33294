/* Bokeh discs, step 1 (bokeh.py): a particle whose circle of confusion is
 * wider than the footprint splat takes (splat_max_radius pixels) becomes a flat
 * disc whose rim fades over one pixel, swept along its shutter path with
 * MOTION_BLUR.  Per particle: its footprint (sprite_shape.glsl; radius: where
 * the rim's ramp ends), its color (the splat's spread evenly over the
 * footprint's area, so the frame's total stays what the particle adds in
 * focus) and how many 16x16 tiles it touches.  Every other particle gets
 * radius 0: no tiles. */

void main()
{
  int slot = sprite_linear_index();
  if (slot >= count) {
    return;
  }
  Particle particle = load_particle(particle_texel(slot, textureSize(pos_age, 0).x));
  particle.position += state_origin.xyz;
  ivec2 size = ivec2(target_extent);

  Footprint footprint = footprint_from(vec4(0.0), vec4(0.0), vec4(0.0));
  vec4 clip = transform_point(view_proj, particle.position);
  float radius = 0.0;
  if (particle_alive(particle) && clip.w > 0.0 && abs(clip.z) <= clip.w) {
    radius = coc_radius_px(clip.w);
  }
  if (radius > splat_max_radius) {
    vec3 window = window_coordinates(clip, size);
    vec2 start, end;
    screen_path(particle.position, particle.velocity, window.xy, target_extent, start, end);
    if (is_finite(vec3(start, 0.0)) && is_finite(vec3(end, 0.0))) {
      float half_path = 0.5 * length(end - start);
      vec4 look_now = particle_look(particle, particle.age / particle.life);
      float coverage = pixel_coverage(particle_radius_px(slot, look_now, pixel_scale, clip.w));
      /* Area under the rim's ramp: pi (r^2 + 1/12) for the disc, 2 r per pixel of path. */
      float area = 3.14159265 * (radius * radius + 1.0 / 12.0) + 4.0 * radius * half_path;
      footprint.center = 0.5 * (start + end);
      footprint.radius = radius + 0.5;
      footprint.depth = window.z;
      footprint.streak = end - start;
      footprint.color = vec4(particle_color(slot, look_now, coverage) / area, 0.0);
    }
  }
  ivec2 out_texel = particle_texel(slot, imageSize(sprite_shapes).x);
  store_footprint(out_texel, footprint);
  int tiles = sprite_tile_count(sprite_shape_of(footprint), footprint.streak, size);
  imageStore(instance_counts, out_texel, uvec4(uint(tiles)));
}
