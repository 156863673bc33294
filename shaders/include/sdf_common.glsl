/* Shared by the SDF build kernels (addon/engine/simulate/sdf.py).  Triangles live in
 * `sdf_triangles`, three texels each (corners a, b, c in voxel-centre grid
 * coordinates: voxel (i, j, k)'s centre is the point (i, j, k)), so every
 * distance here is in voxels; sdf_write scales it to world units. */

vec3 sdf_corner(int triangle, int corner)
{
  return imageLoad(sdf_triangles, particle_texel(3 * triangle + corner, SDF_TRIANGLE_WIDTH)).xyz;
}

/* Squared distance from p to the closest point of triangle abc (Ericson,
 * Real-Time Collision Detection 5.1.5: Voronoi regions of the corners and
 * edges, else the face).  The numpy reference (reference/simulate/sdf.py) follows the
 * same branches. */
float sdf_triangle_distance2(vec3 p, vec3 a, vec3 b, vec3 c)
{
  vec3 ab = b - a, ac = c - a, ap = p - a;
  float d1 = dot(ab, ap), d2 = dot(ac, ap);
  if (d1 <= 0.0 && d2 <= 0.0) {
    return dot(ap, ap);
  }
  vec3 bp = p - b;
  float d3 = dot(ab, bp), d4 = dot(ac, bp);
  if (d3 >= 0.0 && d4 <= d3) {
    return dot(bp, bp);
  }
  vec3 cp = p - c;
  float d5 = dot(ab, cp), d6 = dot(ac, cp);
  if (d6 >= 0.0 && d5 <= d6) {
    return dot(cp, cp);
  }
  float vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
    vec3 q = ap - ab * (d1 / (d1 - d3));
    return dot(q, q);
  }
  float vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
    vec3 q = ap - ac * (d2 / (d2 - d6));
    return dot(q, q);
  }
  float va = d3 * d6 - d5 * d4;
  if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0) {
    vec3 q = bp - (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
    return dot(q, q);
  }
  float denominator = 1.0 / (va + vb + vc);
  vec3 q = ap - ab * (vb * denominator) - ac * (vc * denominator);
  return dot(q, q);
}

float sdf_distance2_to(vec3 p, int triangle)
{
  return sdf_triangle_distance2(p, sdf_corner(triangle, 0), sdf_corner(triangle, 1), sdf_corner(triangle, 2));
}

/* The triangle's workgroup: one per triangle, spread over a 2D dispatch. */
int sdf_workgroup_triangle()
{
  return int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
}
