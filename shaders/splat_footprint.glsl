/* The splat with a footprint (addon/engine/draw/footprint.py): each particle is
 * ``n`` samples along its screen path over the shutter (MOTION_BLUR) and over
 * its circle of confusion (DEPTH_OF_FIELD), one sample without either, and
 * each sample adds into the 2x2 pixels around it with bilinear weights.
 *
 * The particle's integer color q (splat.glsl's) is split exactly: the add of
 * tap j of sample k (n samples, a power of two) is round(q * (k + W_j) / n) minus everything added
 * before, W_j the bilinear weights summed up to tap j, so the adds telescope to
 * q.  Taps off the target are dropped.  Circles wider than splat_max_radius are left to
 * the bokeh discs (bokeh_discs.glsl).  Same cull, depth rule (for each
 * tap, at the particle's depth), look and packed atomics as splat.glsl. */

#ifdef DEPTH_OF_FIELD
const int DISC_COUNT[DISC_LEVELS] = int[DISC_LEVELS](DISC_COUNTS);
const int DISC_FIRST[DISC_LEVELS] = int[DISC_LEVELS](DISC_FIRSTS);
const float DISC_RADIUS[DISC_LEVELS] = float[DISC_LEVELS](DISC_RADII);

vec2 disc_point(int i)
{
  vec4 pair = disc[i >> 1];
  return (i & 1) == 0 ? pair.xy : pair.zw;
}
#endif

#ifdef DEPTH_TEST
/* Behind the scene's opaque surface at ``pixel``: the tile's range decides most, the full depth the rest. */
bool hidden(ivec2 pixel, float depth)
{
  vec2 tile_range = texelFetch(coarse_depth, pixel / COARSE_TILE, 0).xy;
  return depth > tile_range.y || (depth > tile_range.x && depth > texelFetch(scene_depth, pixel, 0).r);
}
#endif

const int SLOTS = 6; /* pending adds of the merge in main: column parity x row modulo 3 */

/* This invocation's batch of adds on their way to the images (add_colors):
 * slot s adds batch_add[s] at batch_pixel[s] where batch_go[s].  And the last
 * batch's carries, whose returned values the next batch reads.  (Globals, not
 * array parameters, which not every backend's translation takes.) */
ivec2 batch_pixel[SLOTS];
uvec3 batch_add[SLOTS];
bool batch_go[SLOTS];
uint carry_old[SLOTS];
bool carried[SLOTS];

/* Carries of the last batch that wrapped G_high off the top of accum_hi: overflows. */
uint carry_wraps()
{
  uint wraps = 0u;
  for (int s = 0; s < SLOTS; s++) {
    wraps += uint(carried[s] && carry_old[s] + (1u << 21u) < (1u << 21u));
  }
  return wraps;
}

/* The batch's packed adds; the overflows.  Every slot's two atomics are issued
 * before any returned value is read, then every carry (G_low wrapping off
 * accum_lo); a carry's returned value (did G_high wrap?) is read by the next
 * batch, or by carry_wraps after the last, so a batch waits on memory once
 * however many slots it adds. */
uint add_colors()
{
  uint old_hi[SLOTS], old_lo[SLOTS];
  for (int s = 0; s < SLOTS; s++) {
    old_hi[s] = 0u;
    old_lo[s] = 0u;
    if (batch_go[s]) {
      old_hi[s] = accum_add_hi(batch_pixel[s], packed_hi(batch_add[s]));
      old_lo[s] = accum_add_lo(batch_pixel[s], packed_lo(batch_add[s]));
    }
  }
  uint overflows = carry_wraps();
  for (int s = 0; s < SLOTS; s++) {
    uint lo = packed_lo(batch_add[s]);
    carried[s] = batch_go[s] && old_lo[s] + lo < lo;
    if (carried[s]) {
      carry_old[s] = accum_add_hi(batch_pixel[s], 1u << 21u);
    }
  }
  for (int s = 0; s < SLOTS; s++) {
    uvec3 add = batch_add[s];
    uint hi = packed_hi(add);
    uint slot_overflows = uint((old_hi[s] & LOW21) + add.r > LOW21) + uint((old_lo[s] & LOW21) + add.b > LOW21) +
                          uint(old_hi[s] + hi < hi);
    overflows += batch_go[s] ? slot_overflows : 0u;
  }
  return overflows;
}

/* Whether a pending ``add`` at ``pixel`` goes to the images: not empty, on the target and (DEPTH_TEST) not hidden. */
bool wanted(ivec2 pixel, uvec3 add, float depth)
{
  if (all(equal(add, uvec3(0u))) || any(lessThan(pixel, ivec2(0))) || any(greaterThanEqual(pixel, target_size))) {
    return false;
  }
#ifdef DEPTH_TEST
  if (hidden(pixel, depth)) {
    return false;
  }
#endif
  return true;
}

void main()
{
  int index;
  Particle particle;
  if (!read_particle(invocation_slot(), index, particle)) {
    return;
  }
  vec4 clip = transform_point(view_proj, particle.position);
  if (!in_depth_range(clip)) {
    return;
  }
  vec2 size = vec2(target_size);
  vec3 window = window_coordinates(clip, target_size);
  vec2 start, end;
  screen_path(particle.position, particle.velocity, window.xy, size, start, end);
  float spread = 0.0;
#ifdef DEPTH_OF_FIELD
  spread = coc_radius_px(clip.w);
  if (spread > splat_max_radius) {
    return; /* a bokeh disc */
  }
#endif
  /* Nothing of the footprint reaches the target. */
  if (any(lessThan(max(start, end) + (spread + 1.0), vec2(0.0))) ||
      any(greaterThan(min(start, end) - (spread + 1.0), size))) {
    return;
  }

  float depth = window.z; /* (for DEPTH_TEST) */

  vec4 look_now = particle_look(particle, div_rn(particle.age, particle.life));
  float radius_px = particle_radius_px(index, look_now, pixel_scale, clip.w);
  vec3 color = particle_color(index, look_now, pixel_coverage(radius_px));
  uvec3 q = quantize_color(color, quantize_scale);
  if (all(equal(q, uvec3(0u)))) {
    return;
  }

  /* Samples: at least one a pixel along the streak's longer axis, at least the
   * disc's, a power of two (2^shift: dividing by it is exact on every GPU). */
  vec2 path = end - start;
  int needed = clamp(int(ceil(max(abs(path.x), abs(path.y)))), 1, MAX_SAMPLES);
#ifdef DEPTH_OF_FIELD
  /* The smallest pattern whose radius holds the circle (radii ascend; constant indices, no local array). */
  int disc_count = DISC_COUNT[0], disc_first = DISC_FIRST[0];
  for (int level = 1; level < DISC_LEVELS; level++) {
    if (spread > DISC_RADIUS[level - 1]) {
      disc_count = DISC_COUNT[level];
      disc_first = DISC_FIRST[level];
    }
  }
  needed = max(needed, disc_count);
#endif
  int shift = needed > 1 ? findMSB(needed - 1) + 1 : 0;
  int n = 1 << shift;

  /* Adds to one pixel from consecutive samples are merged before they reach the
   * images: a pending add per slot, flushed when a tap of that slot lands on
   * another pixel.  A slot is a pixel class, column parity x row modulo 3, so
   * that a disc's serpentine rows, whose samples wander across a row boundary,
   * keep three rows pending, not two (about 1.5x fewer flushes than parity
   * alone; streaks flush once a pixel either way).  A sample's four taps land
   * in four different slots, each slot's tap is picked with constant indices
   * (no local array), and a sample's flushes go out as one batch
   * (add_colors).  Any class of a row would be correct (taps never share a
   * slot within a sample), consistent ones merge more.  A merged add is part
   * of one particle's q, so it packs like any add. */
  ivec2 pending_pixel[SLOTS];
  uvec3 pending_add[SLOTS];
  for (int slot = 0; slot < SLOTS; slot++) {
    pending_pixel[slot] = ivec2(-2);
    pending_add[slot] = uvec3(0u);
    carry_old[slot] = 0u;
    carried[slot] = false;
  }
  uint overflows = 0u;
  uvec3 done = uvec3(0u);
  for (int k = 0; k < n; k++) {
    precise vec2 at = start + path * ldexp(float(k) + 0.5, -shift);
#ifdef DEPTH_OF_FIELD
    at += disc_point(disc_first + (k & (disc_count - 1))) * spread; /* counts are powers of two */
#endif
    precise vec2 corner = floor(at - 0.5);
    precise vec2 f = at - 0.5 - corner;
    /* Bilinear weights of taps (0,0), (1,0), (0,1), (1,1), summed up to each. */
    precise float w0 = (1.0 - f.x) * (1.0 - f.y);
    precise float w1 = 1.0 - f.y;
    precise float w2 = w1 + (1.0 - f.x) * f.y;
    float upto_weight[4] = float[4](w0, w1, w2, 1.0);
    uvec3 tap_add[4];
    for (int j = 0; j < 4; j++) {
      precise float fraction = float(k) + upto_weight[j];
      precise vec3 share = vec3(q) * ldexp(fraction, -shift) + 0.5;
      uvec3 upto = (k == n - 1 && j == 3) ? q : max(uvec3(share), done);
      tap_add[j] = upto - done;
      done = upto;
    }
    ivec2 base = ivec2(corner);
    int row_class = int(uint(base.y) % 3u);
    bool any_flushing = false;
    for (int slot = 0; slot < SLOTS; slot++) {
      int row = slot / 2 - row_class; /* the tap row whose pixels have this slot's class: 0, 1, or 2 (none) */
      row += row < 0 ? 3 : 0;
      int column = (slot & 1) ^ (base.x & 1);
      int j = column + 2 * row;
      ivec2 pixel = base + ivec2(column, row);
      uvec3 add = j == 0 ? tap_add[0] : j == 1 ? tap_add[1] : j == 2 ? tap_add[2] : tap_add[3];
      bool moved = row < 2 && pending_pixel[slot] != pixel;
      batch_pixel[slot] = pending_pixel[slot];
      batch_add[slot] = pending_add[slot];
      batch_go[slot] = moved && wanted(pending_pixel[slot], pending_add[slot], depth);
      any_flushing = any_flushing || batch_go[slot];
      if (row < 2) {
        pending_pixel[slot] = pixel;
        pending_add[slot] = (moved ? uvec3(0u) : pending_add[slot]) + add;
      }
    }
    if (any_flushing) {
      overflows += add_colors();
    }
  }
  for (int slot = 0; slot < SLOTS; slot++) {
    batch_pixel[slot] = pending_pixel[slot];
    batch_add[slot] = pending_add[slot];
    batch_go[slot] = wanted(pending_pixel[slot], pending_add[slot], depth);
  }
  overflows += add_colors();
  overflows += carry_wraps();
  if (overflows != 0u) {
    imageAtomicAdd(stats, ivec2(STAT_OVERFLOW, 0), overflows);
  }
}
