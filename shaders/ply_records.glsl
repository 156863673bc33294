/* A point cache's PLY body built on the GPU (look/point_records.py): the
 * i-th live slot (compaction.py's live_index: slot order, as the file lists
 * them) writes its vertex record, PLY_TEXELS texels of four float32 in the
 * file's property order (x y z vx | vy vz radius color_r | color_g color_b
 * age rx | ry rz id_high id_low), to texels PLY_TEXELS * i .. of ply_body,
 * so the rows read back are the file's body as they are.  Every value is the
 * float the numpy reference (output/export.particle_attributes) computes:
 * divisions correctly rounded (div_rn), no fused multiply-adds (precise),
 * the per-slot randomness (brightness and size variation, angle at birth,
 * spin, the axis turned about) drawn by numpy once a bake into slot_draws
 * and slot_axis; the color by age or by speed (particle_look). */

void main()
{
  int index;
  ivec2 texel;
  if (!particle_slot(imageSize(live_index).x, count, index, texel)) {
    return;
  }
  if (uint(index) >= imageLoad(live_count, ivec2(0, 0)).x) {
    return;
  }
  int slot = int(imageLoad(live_index, texel).x);
  ivec2 at = particle_texel(slot, imageSize(pos_age).x);
  Particle particle = load_particle(at);
  precise vec3 position = particle.position + state_origin.xyz;
  vec4 look_now = particle_look(particle, div_rn(particle.age, particle.life));
  vec4 draws = imageLoad(slot_draws, at); /* brightness, size, angle at birth, spin */
  vec3 axis = imageLoad(slot_axis, at).xyz;
  precise vec3 color = look_now.rgb * draws.x;
  precise float radius = draws.y * look_now.a;
  precise float spun = draws.w * particle.age;
  precise float angle = draws.z + spun;
  precise vec3 rotation = axis * angle;
  uint id = uint(slot) + uint(first_id);
  ivec2 record = particle_texel(index * PLY_TEXELS, imageSize(ply_body).x);
  imageStore(ply_body, record, vec4(position, particle.velocity.x));
  imageStore(ply_body, record + ivec2(1, 0), vec4(particle.velocity.yz, radius, color.r));
  imageStore(ply_body, record + ivec2(2, 0), vec4(color.gb, particle.age, rotation.x));
  imageStore(ply_body, record + ivec2(3, 0), vec4(rotation.yz, float(id >> 16u), float(id & 0xFFFFu)));
}
