/* After a simulate step: each live particle's position into its trail ring
 * (addon/engine/simulate/trails.py).  A particle seen for the first time since it was
 * (re)born (no points yet, or an age lower than at the last record) starts its
 * ring over at its birth position (position - velocity x age); then the
 * newest point moves on to the position every step (trail_spacing 0) or once
 * the particle is trail_spacing from the newest point.  Dead, unborn and
 * waiting slots empty their ring. */

void main()
{
  ivec2 size = imageSize(trail_heads);
  int index = particle_index(imageSize(pos_age).x);
  if (index >= count) {
    return;
  }
  ivec2 texel = particle_texel(index, size.x);
  Particle particle = load_particle(texel);
  precise vec3 position = particle.position + state_origin.xyz;
  float age = particle.age;
  if (!(age >= 0.0 && age < particle.life && is_finite(position))) {
    imageStore(trail_heads, texel, vec4(0.0));
    return;
  }
  vec4 head = imageLoad(trail_heads, texel);
  int newest = int(head.x);
  int filled = int(head.y);
  vec3 last;
  if (filled == 0 || age < head.z) {
    precise vec3 birth = position - particle.velocity * age;
    newest = 0;
    filled = 1;
    last = birth;
    imageStore(trail_points, trail_texel(index, 0, size), vec4(birth, 0.0));
  }
  else {
    last = imageLoad(trail_points, trail_texel(index, newest, size)).xyz;
  }
  precise vec3 moved = position - last;
  precise float moved2 = moved.x * moved.x + moved.y * moved.y + moved.z * moved.z;
  precise float spacing2 = trail_spacing * trail_spacing;
  if (trail_spacing <= 0.0 || moved2 >= spacing2) {
    int ring = int(trail_length);
    newest = (newest + 1) % ring;
    filled = min(filled + 1, ring);
    imageStore(trail_points, trail_texel(index, newest, size), vec4(position, 0.0));
  }
  imageStore(trail_heads, texel, vec4(float(newest), float(filled), age, 0.0));
}
