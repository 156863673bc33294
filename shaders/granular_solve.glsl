/* One Jacobi iteration of a granular effect's contacts (granular.py; Macklin et al. 2014, "Unified Particle
 * Physics for Real-Time Applications", sections 5 and 6): every live grain gathers, from its neighbours in the
 * grid's fixed order, the corrections of its contacts at the iterate grain_in (pos_age, the predicted positions,
 * on the first iteration):
 *
 *   non-penetration: grains of radius grain_radius closer than 2 r are pushed apart along their normal;
 *   friction: the pair's relative tangential motion over the step is removed while it is below
 *     static_friction x the penetration, else cut by dynamic_friction x the penetration;
 *   cohesion: a pair up to COHESION_REACH x 2 r apart is pulled together by that fraction of the gap;
 *
 * each weighted by mass scaling (lower grains heavier, their inverse mass exp(mass_scaling x height): a pile's
 * lower layers yield less, which stabilises stacks like shock propagation), then averaged over the contacts
 * (sum / count) and over-relaxed by `relaxation`.  Gather only: each grain writes its own grain_out.
 *
 * Pre-stabilisation (ibid., section 4.2): the first iterations (pre_stabilising) solve the overlaps the grains
 * had where the step began (the solver did not finish them then), without friction, and move both the start
 * and the prediction by the result (the iterate's second texel, its shift): the settle pass gives that move no
 * velocity, so left-over overlaps do not pop grains out of a pile. */

const float COHESION_REACH = 1.1;

/* An iterate holds two texels a grain, side by side (granular.py): its position, then its shift. */
ivec2 iterate_texel(int slot, int width, int part)
{
  ivec2 texel = particle_texel(slot, width);
  return ivec2(2 * texel.x + part, texel.y);
}

/* The first iterate is the prediction as symplectic Euler makes it (the simulate pass moved the grain by its
 * velocity before gravity's kick: gravity's fall of the step, grain_fall, is added).  The settle pass takes the
 * velocity from the move since the step began, so it subtracts that fall with the shift (below). */
vec3 grain_at(int slot, int width)
{
  return first_iteration > 0.5 ? load_particle(particle_texel(slot, width)).position + grain_fall
                               : imageLoad(grain_in, iterate_texel(slot, width, 0)).xyz;
}

/* The iterate's moves so far that carry no velocity: the fall, then pre-stabilisation's. */
vec3 shift_at(int slot, int width)
{
  return first_iteration > 0.5 ? grain_fall : imageLoad(grain_in, iterate_texel(slot, width, 1)).xyz;
}

void store_iterate(int slot, int width, vec3 position, vec3 shift)
{
  imageStore(grain_out, iterate_texel(slot, width, 0), vec4(position, 0.0));
  imageStore(grain_out, iterate_texel(slot, width, 1), vec4(shift, 0.0));
}

/* Where a grain was when the step began (the symplectic prediction less the step's motion), moved by the
 * iterate's pre-stabilisation so far (its shift less the fall). */
vec3 grain_start(int slot, int width)
{
  Particle particle = load_particle(particle_texel(slot, width));
  return particle.position - particle.velocity * grain_dt + shift_at(slot, width);
}

/* A contact's correction of the grain at x from the one at y, weighted by the grain's share; its friction from
 * the pair's relative motion since the step began (moved_x, moved_y) unless pre-stabilising. */
vec3 contact_correction(vec3 x, vec3 y, float share, bool stabilising, vec3 moved_x, vec3 moved_y, out bool touching)
{
  vec3 d = x - y;
  float dist = length(d);
  float contact = 2.0 * grain_radius;
  touching = dist > 0.0 && dist < contact * (cohesion > 0.0 && !stabilising ? COHESION_REACH : 1.0);
  if (!touching) {
    return vec3(0.0);
  }
  vec3 normal = d / dist;
  float depth = contact - dist;
  if (depth <= 0.0) { /* cohesion */
    return normal * (cohesion * depth * share);
  }
  vec3 correction = normal * depth;
  if (!stabilising) {
    vec3 relative = moved_x - moved_y;
    vec3 tangential = relative - normal * dot(relative, normal);
    float slide = length(tangential);
    correction -= slide < static_friction * depth ? tangential
                                                  : tangential * min(dynamic_friction * depth / max(slide, 1e-30), 1.0);
  }
  return correction * share;
}

/* A thread a grain in the grid's order (grid_sorted: every slot once, the live ones by cell, the dead last), so
 * the threads of a workgroup walk the same cells and read the same neighbours. */
void main()
{
  int rank;
  ivec2 unused;
  int width = imageSize(pos_age).x;
  if (!particle_slot(width, count, rank, unused)) {
    return;
  }
  int index = int(imageLoad(grid_sorted, particle_texel(rank, imageSize(grid_sorted).x)).w);
  ivec2 texel = particle_texel(index, width);
  Particle particle = load_particle(texel);
  vec3 x = grain_at(index, width);
  vec3 shift = shift_at(index, width);
  if (!particle_alive(particle)) {
    store_iterate(index, width, x, shift);
    return;
  }
  bool stabilising = pre_stabilising > 0.5;
  float height = dot(particle.position, grain_up);
  vec3 start = grain_start(index, width);
  vec3 at = stabilising ? start : x;
  vec3 total = vec3(0.0);
  int contacts = 0;
  NeighbourWalk walk = neighbours_of(index, particle.position);
  int entry;
  vec3 predicted;
  while (next_neighbour(walk, entry, predicted)) {
    int j = walk.slot;
    vec3 start_j = grain_start(j, width);
    vec3 y = stabilising ? start_j : grain_at(j, width);
    /* w_i / (w_i + w_j) with w = exp(mass_scaling * height), the exponent clamped against overflow */
    float share = 1.0 / (1.0 + exp(clamp(mass_scaling * (dot(predicted, grain_up) - height), -30.0, 30.0)));
    bool touching;
    total += contact_correction(at, y, share, stabilising, x - start, y - start_j, touching);
    contacts += touching ? 1 : 0;
  }
  count_overflow(walk);
  vec3 move = contacts > 0 ? total * (relaxation / float(contacts)) : vec3(0.0);
  store_iterate(index, width, x + move, stabilising ? shift + move : shift);
}
