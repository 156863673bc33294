/* Winding numbers along the axes, step one: for each axis, the columns of
 * voxel centres along it that cross this triangle (2D edge functions over the
 * other two axes, with a top-left rule so a column through a shared edge or
 * corner meets exactly one of the triangles there) count one crossing in the
 * voxel whose centre is the first at or past the crossing: in its axis'
 * field, the low count if the triangle faces along the axis (its projected
 * area is positive), the high count if it faces against it.  sdf_winding then
 * sums them along each column. */

/* Edge function of q against the edge p0 -> p1, evaluated with the edge's
 * corners in a fixed order so the two triangles sharing it get exactly
 * opposite values; 0 on the edge is kept by the triangle the edge is top-left
 * for (orientation made counter-clockwise first). */
bool sdf_edge_covers(vec2 p0, vec2 p1, vec2 q)
{
  bool swapped = p1.x < p0.x || (p1.x == p0.x && p1.y < p0.y);
  vec2 s = swapped ? p1 : p0, e = swapped ? p0 : p1;
  precise float value = (e.x - s.x) * (q.y - s.y) - (e.y - s.y) * (q.x - s.x);
  value = swapped ? -value : value;
  vec2 edge = p1 - p0;
  bool top_left = edge.y < 0.0 || (edge.y == 0.0 && edge.x > 0.0);
  return value > 0.0 || (value == 0.0 && top_left);
}

/* One more crossing in a count of `sdf_winding` at `voxel`: a compare-and-swap
 * that leaves a count at SDF_CROSSING_LIMIT as it is (a plain add would carry
 * into the next count), so the count ends at min(crossings, limit) whatever
 * the order. */
void sdf_count_crossing(ivec3 voxel, uint shift)
{
  uint word = imageLoad(sdf_winding, voxel).x;
  while (((word >> shift) & SDF_CROSSING_LIMIT) != SDF_CROSSING_LIMIT) {
    uint seen = imageAtomicCompSwap(sdf_winding, voxel, word, word + (1u << shift));
    if (seen == word) {
      break;
    }
    word = seen;
  }
}

void main()
{
  int triangle = sdf_workgroup_triangle();
  if (triangle >= triangle_count) {
    return;
  }
  vec3 corners[3] = vec3[3](sdf_corner(triangle, 0), sdf_corner(triangle, 1), sdf_corner(triangle, 2));
  ivec3 size = imageSize(sdf_winding);
  for (int axis = 0; axis < 3; axis++) {
    int u = (axis + 1) % 3, w = (axis + 2) % 3;
    vec2 a = vec2(corners[0][u], corners[0][w]);
    vec2 b = vec2(corners[1][u], corners[1][w]);
    vec2 c = vec2(corners[2][u], corners[2][w]);
    precise float area = (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
    if (area == 0.0) {
      continue; /* edge-on to this axis: its neighbours cover the columns */
    }
    vec3 heights = vec3(corners[0][axis], corners[1][axis], corners[2][axis]);
    uint shift = uint(SDF_AXIS_BITS * axis + (area > 0.0 ? 0 : SDF_CROSSING_BITS));
    if (area < 0.0) { /* counter-clockwise */
      vec2 swap = b; b = c; c = swap;
      heights = heights.xzy;
      area = -area;
    }
    ivec2 low = max(ivec2(ceil(min(a, min(b, c)))), ivec2(0));
    ivec2 high = min(ivec2(floor(max(a, max(b, c)))), ivec2(size[u], size[w]) - 1);
    ivec2 extent = high - low + 1;
    if (any(lessThanEqual(extent, ivec2(0)))) {
      continue;
    }
    for (int v = int(gl_LocalInvocationID.x); v < extent.x * extent.y; v += SDF_BAND_THREADS) {
      vec2 q = vec2(low + ivec2(v % extent.x, v / extent.x));
      if (!sdf_edge_covers(b, c, q) || !sdf_edge_covers(c, a, q) || !sdf_edge_covers(a, b, q)) {
        continue;
      }
      /* barycentric weights of q: the crossing's height along the axis */
      float wa = (c.x - b.x) * (q.y - b.y) - (c.y - b.y) * (q.x - b.x);
      float wb = (a.x - c.x) * (q.y - c.y) - (a.y - c.y) * (q.x - c.x);
      float height = (wa * heights.x + wb * heights.y + (area - wa - wb) * heights.z) / area;
      int first = max(int(ceil(height)), 0);
      if (first < size[axis]) {
        ivec3 voxel;
        voxel[axis] = first;
        voxel[u] = int(q.x);
        voxel[w] = int(q.y);
        sdf_count_crossing(voxel, shift);
      }
    }
  }
}
