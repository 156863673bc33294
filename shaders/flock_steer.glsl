/* Reynolds boids (flocking.py), a thread a live entry of the grid (cell order): each bird's neighbours within the
 * view radius (the grid's fixed order) and cone give separation (away, weighted 1 / r), alignment (their mean
 * velocity) and cohesion (toward their centre); with the target and the colliders nearer than the avoid
 * distance, each steers (desired direction at full speed minus the velocity, at most the steering force); the
 * weighted sum, at most the steering force, changes the velocity for the step, at most the top speed.  The new
 * velocity into the bird's slot of the state, its position moved by the difference over the step (the simulate
 * dispatch moved it with the old one); the gathers read the grid's copies, so no thread reads what another
 * writes. */

vec3 clamp_length(vec3 v, float limit)
{
  float size = length(v);
  return size > limit ? v * (limit / size) : v;
}

vec3 steer(vec3 desired, vec3 velocity)
{
  float size = length(desired);
  return size > 0.0 ? clamp_length(desired / size * flock_max_speed - velocity, flock_max_force) : vec3(0.0);
}

void main()
{
  int entry;
  ivec2 texel;
  vec4 own;
  if (!grid_live_entry(entry, texel, own)) {
    return;
  }
  int slot = int(own.w);
  vec3 p = own.xyz;
  vec3 v = imageLoad(grid_velocity, texel).xyz;
  float speed = length(v);
  vec3 heading = speed > 0.0 ? v / speed : vec3(0.0);
  vec3 separation = vec3(0.0);
  vec3 alignment = vec3(0.0);
  vec3 centre = vec3(0.0);
  float seen = 0.0;
  int sorted_width = imageSize(grid_sorted).x;
  Neighbours list = neighbours_of(entry);
  for (int n = 0; n < list.count; n++) {
    int k = neighbour_entry(list, n);
    vec3 d = neighbour_position(k) - p;
    float r2 = dot(d, d);
    if (r2 > 0.0 && (speed == 0.0 || dot(heading, d) >= flock_view_cos * sqrt(r2))) {
      separation -= d / r2;
      alignment += imageLoad(grid_velocity, particle_texel(k, sorted_width)).xyz;
      centre += d;
      seen += 1.0;
    }
  }
  float inverse = seen > 0.0 ? 1.0 / seen : 0.0;
  vec3 force = flock_separation * steer(separation, v) + flock_alignment * steer(alignment * inverse, v);
  force += flock_cohesion * steer(centre * inverse, v);
  if (flock_has_target > 0.0) {
    force += flock_seek * steer(flock_target_position - p, v);
  }
  vec3 away = vec3(0.0);
  for (int c = 0; c < collider_count; c++) {
    float distance;
    vec3 normal;
    if (collider_surface(load_collider(c), p, distance, normal) && distance < flock_avoid_distance) {
      away += normal * (1.0 - distance / flock_avoid_distance);
    }
  }
  force += flock_avoid * steer(away, v) * length(away);
  force = clamp_length(force, flock_max_force);
  vec3 steered = clamp_length(v + force * flock_dt, flock_max_speed);
  ivec2 at = particle_texel(slot, imageSize(pos_age).x);
  Particle bird = load_particle(at);
  bird.position += (steered - v) * flock_dt;
  bird.velocity = steered;
  store_particle(at, bird);
}
