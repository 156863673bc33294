/* Lab (bench/walk_variants.py): shapes of the neighbour walk, each counting a particle's neighbours within the
 * radius and summing (r^2 - d^2)^3 over them (fluid_lambda's density without its reads), a thread a live entry.
 * WALK_SHAPE picks the shape; lab_out gets (count, sum) by entry. */

/* The product's walk until 2026-12-02 (shaders/include/neighbours.glsl then), a generator the gathers called:
 * the nine rows of the 27 cells, each bin once, the distance test alone. */
struct NeighbourWalk {
  int self;       /* the walker's slot, left out */
  vec3 position;
  ivec3 centre;
  int row;        /* the next of the nine rows */
  uint base;      /* the bin of the current row's first cell */
  int kept;       /* bits of the current row's three bins that no earlier row had */
  int column;     /* the next of the row's three bins */
  int at;         /* the next entry */
  int end;
  int found;
  bool overflowed;
  int slot;       /* the slot of the neighbour next_neighbour returned */
};

NeighbourWalk neighbours_of(int self, vec3 position)
{
  return NeighbourWalk(self, position, grid_cell(position), 0, 0u, 0, 3, 0, 0, 0, false, -1);
}

/* Squared distance, unfused in a fixed order (the reference's float32 sum). */
float grid_distance2(vec3 a, vec3 b)
{
  precise vec3 d = a - b;
  precise float d2 = d.x * d.x + d.y * d.y + d.z * d.z;
  return d2;
}

/* The bin of row `row`'s first cell (x - 1 of the centre). */
uint grid_row_base(NeighbourWalk walk, int row)
{
  ivec3 c = walk.centre;
  return (grid_row_hash(c.y + row % 3 - 1, c.z + row / 3 - 1) + uint(c.x - 1)) & uint(grid_table - 1);
}

/* The next row: its first bin, and which of its three bins no earlier row had. */
void grid_next_row(inout NeighbourWalk walk)
{
  uint mask = uint(grid_table - 1);
  walk.base = grid_row_base(walk, walk.row);
  walk.kept = 7;
  for (int earlier = 0; earlier < walk.row; earlier++) {
    uint shift = walk.base - grid_row_base(walk, earlier);
    for (int k = 0; k < 3; k++) {
      if (((shift + uint(k)) & mask) < 3u) {
        walk.kept &= ~(1 << k);
      }
    }
  }
  walk.row++;
  walk.column = 0;
}

/* The next entry range: the current row's next run of kept, consecutive bins; false once the rows are done. */
bool grid_next_range(inout NeighbourWalk walk)
{
  uint mask = uint(grid_table - 1);
  while (true) {
    if (walk.column == 3) {
      if (walk.row == 9) {
        return false;
      }
      grid_next_row(walk);
    }
    if ((walk.kept & (1 << walk.column)) == 0) {
      walk.column++;
      continue;
    }
    uint first = (walk.base + uint(walk.column)) & mask;
    uint last = first;
    walk.column++;
    while (walk.column < 3 && (walk.kept & (1 << walk.column)) != 0 &&
           ((walk.base + uint(walk.column)) & mask) == last + 1u)
    {
      last++;
      walk.column++;
    }
    int offsets_width = imageSize(grid_offsets).x;
    walk.at = int(imageLoad(grid_offsets, particle_texel(int(first), offsets_width)).x);
    walk.end = int(imageLoad(grid_offsets, particle_texel(int(last) + 1, offsets_width)).x);
    return true;
  }
  return false;
}

/* The next neighbour's entry and position (walk.slot its slot); false once the rows are walked, or
 * MAX_NEIGHBOURS were found and another is within the radius (walk.overflowed). */
bool next_neighbour(inout NeighbourWalk walk, out int entry, out vec3 neighbour)
{
  int sorted_width = imageSize(grid_sorted).x;
  precise float radius2 = grid_radius * grid_radius;
  entry = -1;
  neighbour = vec3(0.0);
  while (true) {
    while (walk.at < walk.end) {
      int k = walk.at;
      vec4 candidate = imageLoad(grid_sorted, particle_texel(k, sorted_width));
      walk.at++;
      int j = int(candidate.w);
      if (j == walk.self || !(grid_distance2(walk.position, candidate.xyz) < radius2)) {
        continue;
      }
      if (walk.found == MAX_NEIGHBOURS) {
        walk.overflowed = true;
        walk.row = 9;
        walk.column = 3;
        walk.end = walk.at;
        return false;
      }
      walk.found++;
      walk.slot = j;
      entry = k;
      neighbour = candidate.xyz;
      return true;
    }
    if (!grid_next_range(walk)) {
      return false;
    }
  }
  return false;
}

void count_overflow(NeighbourWalk walk)
{
  if (walk.overflowed) {
    imageAtomicAdd(grid_overflow, ivec2(0), 1u);
  }
}

/* The density's term of a neighbour at q: (r^2 - |p - q|^2)^3. */
float lab_weight(vec3 p, vec3 q, float radius2)
{
  vec3 d = p - q;
  float w = radius2 - dot(d, d);
  return w * w * w;
}

void write_out(ivec2 texel, int found, float sum)
{
  imageStore(lab_out, texel, vec4(float(found), sum, 0.0, 0.0));
}

#if WALK_SHAPE == 0 || WALK_SHAPE == 2
/* 0: the product's walk (next_neighbour);  2: the same, storing each neighbour's entry into lab_list (a column
 * per neighbour: entry + n x live, consecutive threads' words side by side) and the count into lab_count. */
void main()
{
  int entry;
  ivec2 texel;
  vec4 own;
  if (!grid_live_entry(entry, texel, own)) {
    return;
  }
  int live = grid_live_entries();
  int list_width = imageSize(lab_list).x;
  precise float radius2 = grid_radius * grid_radius;
  NeighbourWalk walk = neighbours_of(int(own.w), own.xyz);
  float sum = 0.0;
  int k;
  vec3 q;
  while (next_neighbour(walk, k, q)) {
    sum += lab_weight(own.xyz, q, radius2);
#if WALK_SHAPE == 2
    imageStore(lab_list, particle_texel((walk.found - 1) * live + entry, list_width), uvec4(uint(k)));
#endif
  }
#if WALK_SHAPE == 2
  imageStore(lab_count, texel, uvec4(uint(walk.found)));
#endif
  write_out(texel, walk.found, sum);
}
#endif

#if WALK_SHAPE == 1 || WALK_SHAPE == 4
/* A candidate: from the image (shape 1), or from the workgroup's tile where its row's span is there (shape 4). */
vec4 lab_candidate(int row, int k, int sorted_width)
{
#if WALK_SHAPE == 4
  if (span_at[row] != 0xFFFFFFFFu) {
    return tile[k + int(span_at[row]) - int(span_start[row])];
  }
#endif
  return imageLoad(grid_sorted, particle_texel(k, sorted_width));
}

/* Nested loops in the product's order: rows, their kept bins, the entries; the body inline.  Writes lab_out. */
void walk_loops(int self, vec3 p, ivec2 texel)
{
  precise float radius2 = grid_radius * grid_radius;
  int sorted_width = imageSize(grid_sorted).x;
  int offsets_width = imageSize(grid_offsets).x;
  uint mask = uint(grid_table - 1);
  NeighbourWalk walk = neighbours_of(self, p);
  int found = 0;
  float sum = 0.0;
  bool full = false;
  for (int row = 0; row < 9 && !full; row++) {
    grid_next_row(walk);
    for (int column = 0; column < 3 && !full; column++) {
      if ((walk.kept & (1 << column)) == 0) {
        continue;
      }
      int bin = int((walk.base + uint(column)) & mask);
      int at = int(imageLoad(grid_offsets, particle_texel(bin, offsets_width)).x);
      int end = int(imageLoad(grid_offsets, particle_texel(bin + 1, offsets_width)).x);
      for (int k = at; k < end; k++) {
        vec4 candidate = lab_candidate(row, k, sorted_width);
        if (int(candidate.w) == self || !(grid_distance2(p, candidate.xyz) < radius2)) {
          continue;
        }
        if (found == MAX_NEIGHBOURS) {
          full = true;
          break;
        }
        found++;
        sum += lab_weight(p, candidate.xyz, radius2);
      }
    }
  }
  write_out(texel, found, sum);
}
#endif

#if WALK_SHAPE == 1
void main()
{
  int entry;
  ivec2 texel;
  vec4 own;
  if (grid_live_entry(entry, texel, own)) {
    walk_loops(int(own.w), own.xyz, texel);
  }
}
#endif

#if WALK_SHAPE == 3
/* The gather from the stored list (shape 2's). */
void main()
{
  int entry;
  ivec2 texel;
  vec4 own;
  if (!grid_live_entry(entry, texel, own)) {
    return;
  }
  int live = grid_live_entries();
  int list_width = imageSize(lab_list).x;
  int sorted_width = imageSize(grid_sorted).x;
  precise float radius2 = grid_radius * grid_radius;
  int found = int(imageLoad(lab_count, texel).x);
  float sum = 0.0;
  for (int n = 0; n < found; n++) {
    int k = int(imageLoad(lab_list, particle_texel(n * live + entry, list_width)).x);
    sum += lab_weight(own.xyz, imageLoad(grid_sorted, particle_texel(k, sorted_width)).xyz, radius2);
  }
  write_out(texel, found, sum);
}
#endif

#if WALK_SHAPE == 4
/* Tiled: the workgroup's nine row spans (each row's three bins, min start to max end over its threads) copied
 * into shared memory where they fit (TILE entries in all), then the product's order walked from there; a row
 * whose span does not fit (threads in different rows of cells, a wrap of the table) is read from the image. */
void main()
{
  int local = int(gl_LocalInvocationIndex);
  if (local < 9) {
    span_start[local] = 0xFFFFFFFFu;
    span_end[local] = 0u;
  }
  barrier();
  int entry;
  ivec2 texel;
  vec4 own;
  bool alive = grid_live_entry(entry, texel, own);
  int self = int(own.w);
  vec3 p = own.xyz;
  int sorted_width = imageSize(grid_sorted).x;
  int offsets_width = imageSize(grid_offsets).x;
  uint mask = uint(grid_table - 1);
  NeighbourWalk walk = neighbours_of(self, p);
  if (alive) {
    for (int row = 0; row < 9; row++) {
      uint base = grid_row_base(walk, row);
      if (base + 3u <= mask + 1u) {
        atomicMin(span_start[row], imageLoad(grid_offsets, particle_texel(int(base), offsets_width)).x);
        atomicMax(span_end[row], imageLoad(grid_offsets, particle_texel(int(base) + 3, offsets_width)).x);
      } else {
        atomicMax(span_end[row], 0xFFFFFFFFu); /* a wrap: untiled */
      }
    }
  }
  barrier();
  if (local == 0) {
    uint used = 0u;
    for (int row = 0; row < 9; row++) {
      uint size = span_end[row] > span_start[row] ? span_end[row] - span_start[row] : 0u;
      bool fits = span_end[row] != 0xFFFFFFFFu && used + size <= uint(TILE);
      span_at[row] = fits ? used : 0xFFFFFFFFu;
      used += fits ? size : 0u;
    }
  }
  barrier();
  for (int row = 0; row < 9; row++) {
    if (span_at[row] == 0xFFFFFFFFu || span_end[row] <= span_start[row]) {
      continue;
    }
    int size = int(span_end[row] - span_start[row]);
    for (int i = local; i < size; i += int(gl_WorkGroupSize.x)) {
      tile[int(span_at[row]) + i] = imageLoad(grid_sorted, particle_texel(int(span_start[row]) + i, sorted_width));
    }
  }
  barrier();
  if (!alive) {
    return;
  }
  walk_loops(self, p, texel);
}
#endif

#if WALK_SHAPE == 9
/* Nothing: one workgroup's dispatch, the cost of a dispatch from Python. */
void main()
{
  if (gl_GlobalInvocationID.x == 0u) {
    imageStore(lab_out, ivec2(0), vec4(neighbour_grid.xy, float(grid_table), 0.0));
  }
}
#endif
