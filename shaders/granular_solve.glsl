/* One Jacobi iteration of a granular effect's contacts (granular.py; Macklin et al. 2014, "Unified Particle
 * Physics for Real-Time Applications", sections 5 and 6): every live grain gathers, from its neighbours in the
 * grid's fixed order, the corrections of its contacts at the iterate grain_in (the grid's copy of the predicted
 * positions, grid_sorted, on the first iteration):
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

/* An iterate holds two texels a grain, side by side (granular.py): its position, then its shift; in the grid's
 * entry order, but for the last iteration's, which the settle pass reads by slot. */
ivec2 iterate_texel(int index, int width, int part)
{
  ivec2 texel = particle_texel(index, width);
  return ivec2(2 * texel.x + part, texel.y);
}

/* The first iterate is the prediction as symplectic Euler makes it (the simulate pass moved the grain by its
 * velocity before gravity's kick: gravity's fall of the step, grain_fall, is added).  The settle pass takes the
 * velocity from the move since the step began, so it subtracts that fall with the shift (below).  `predicted`:
 * the entry's position in grid_sorted. */
vec3 grain_at(int entry, int width, vec3 predicted)
{
  return first_iteration > 0.5 ? predicted + grain_fall : imageLoad(grain_in, iterate_texel(entry, width, 0)).xyz;
}

/* The iterate's moves so far that carry no velocity: the fall, then pre-stabilisation's. */
vec3 shift_at(int entry, int width)
{
  return first_iteration > 0.5 ? grain_fall : imageLoad(grain_in, iterate_texel(entry, width, 1)).xyz;
}

void store_iterate(int index, int width, vec3 position, vec3 shift)
{
  imageStore(grain_out, iterate_texel(index, width, 0), vec4(position, 0.0));
  imageStore(grain_out, iterate_texel(index, width, 1), vec4(shift, 0.0));
}

/* Where a grain was when the step began (the symplectic prediction less the step's motion, its velocity the
 * grid's copy), moved by the iterate's pre-stabilisation so far (its shift less the fall). */
vec3 grain_start(int entry, int width, vec3 predicted)
{
  return predicted - imageLoad(grid_velocity, particle_texel(entry, width)).xyz * grain_dt + shift_at(entry, width);
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

/* A thread an entry of the grid (cell order: every slot once, the live ones by cell, the dead last), so the
 * threads of a workgroup read their lists and their neighbours side by side. */
void main()
{
  int entry;
  ivec2 unused;
  int width = imageSize(grid_sorted).x;
  if (!particle_slot(width, count, entry, unused)) {
    return;
  }
  vec4 own = imageLoad(grid_sorted, particle_texel(entry, width));
  int home = last_iteration > 0.5 ? int(own.w) : entry;
  vec3 x = grain_at(entry, width, own.xyz);
  vec3 shift = shift_at(entry, width);
  if (entry >= grid_live_entries()) {
    store_iterate(home, width, x, shift);
    return;
  }
  bool stabilising = pre_stabilising > 0.5;
  float height = dot(own.xyz, grain_up);
  vec3 start = grain_start(entry, width, own.xyz);
  vec3 at = stabilising ? start : x;
  vec3 total = vec3(0.0);
  int contacts = 0;
  Neighbours list = neighbours_of(entry);
  for (int n = 0; n < list.count; n++) {
    int k = neighbour_entry(list, n);
    vec3 predicted = neighbour_position(k);
    vec3 start_k = grain_start(k, width, predicted);
    vec3 y = stabilising ? start_k : grain_at(k, width, predicted);
    /* w_i / (w_i + w_j) with w = exp(mass_scaling * height), the exponent clamped against overflow */
    float share = 1.0 / (1.0 + exp(clamp(mass_scaling * (dot(predicted, grain_up) - height), -30.0, 30.0)));
    bool touching;
    total += contact_correction(at, y, share, stabilising, x - start, y - start_k, touching);
    contacts += touching ? 1 : 0;
  }
  vec3 move = contacts > 0 ? total * (relaxation / float(contacts)) : vec3(0.0);
  store_iterate(home, width, x + move, stabilising ? shift + move : shift);
}
