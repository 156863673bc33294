/* An SDF collider's field (sdf.py builds it into the atlas, stacked along z with the effect's other SDF
 * colliders' grids) sampled at shape-space points: sdf_distance through the texture unit's filter (one fetch,
 * the sphere trace's), sdf_sample by hand with the gradient (8 fetches, the contacts').  Used by simulate.glsl;
 * reads the `sdf_atlas` sampler (linear, clamped to the edge) and the Collider record (records.py), and needs
 * SDF_EDGE_VOXELS and SDF_FILTER_VOXELS #defined (simulation.SDF_SAMPLING, from effectors.py). */

/* Where shape-space point p samples an SDF collider's grid, in voxel-centre coordinates (voxel (i, j, k)'s
 * centre is (i, j, k)), kept SDF_EDGE_VOXELS inside the first and last centres: the texture unit's filter
 * (sdf_distance) then never reaches the next grid of the atlas (the grids are stacked along z), whatever its
 * rounding of the coordinate; `outside`: how far p is outside the grid's box. */
vec3 sdf_voxel(Collider collider, vec3 p, out float outside)
{
  vec3 q = clamp(p, collider.sdf_low, collider.sdf_high);
  outside = length(p - q);
  precise vec3 g = (q - collider.sdf_low) * collider.sdf_inverse_voxel - 0.5; /* floor(g) picks texels */
  return clamp(g, vec3(SDF_EDGE_VOXELS), collider.sdf_size - (1.0 + SDF_EDGE_VOXELS));
}

/* The distance at a point `outside` the grid's box, from the grid's value where the point was clamped to it:
 * the surface is farther than the box (the field is padded), so at least the way to the box, and at least
 * the box's value less that way. */
float sdf_beyond(float inside, float outside)
{
  return outside > 0.0 ? max(outside, inside - outside) : inside;
}

/* An SDF collider's signed distance at shape-space point p, trilinear in the texture unit (the atlas samples
 * linearly): one fetch, for the sphere trace.  The unit's weights have few bits (8 on NVIDIA), so it is within
 * SDF_FILTER_VOXELS voxels of sdf_sample's; `atlas_scale`: 1 / the atlas's size in texels. */
float sdf_distance(Collider collider, vec3 p, vec3 atlas_scale)
{
  float outside;
  vec3 texel = sdf_voxel(collider, p, outside) + vec3(0.5, 0.5, 0.5 + collider.sdf_z_offset);
  return sdf_beyond(textureLod(sdf_atlas, texel * atlas_scale, 0.0).x, outside);
}

/* An SDF collider's signed distance at shape-space point p, and its gradient: trilinear between voxel centres
 * by hand (8 fetches), like sample_noise, so the reference interpolates identically; for contacts only. */
float sdf_sample(Collider collider, vec3 p, out vec3 gradient)
{
  float outside;
  vec3 g = sdf_voxel(collider, p, outside);
  vec3 cell = floor(g);
  vec3 w = g - cell;
  ivec3 i0 = ivec3(cell) + ivec3(0, 0, int(collider.sdf_z_offset));
  float c[8]; /* corner k at i0 + (k & 1, (k >> 1) & 1, k >> 2) */
  for (int k = 0; k < 8; k++) {
    c[k] = texelFetch(sdf_atlas, i0 + ivec3(k & 1, (k >> 1) & 1, k >> 2), 0).x;
  }
  float x00 = c[1] - c[0];
  float x10 = c[3] - c[2];
  float x01 = c[5] - c[4];
  float x11 = c[7] - c[6];
  float c00 = c[0] + x00 * w.x;
  float c10 = c[2] + x10 * w.x;
  float c01 = c[4] + x01 * w.x;
  float c11 = c[6] + x11 * w.x;
  float x0 = x00 + (x10 - x00) * w.y;
  float x1 = x01 + (x11 - x01) * w.y;
  float y0 = c10 - c00;
  float y1 = c11 - c01;
  float c0 = c00 + y0 * w.y;
  float c1 = c01 + y1 * w.y;
  gradient = vec3(x0 + (x1 - x0) * w.z, y0 + (y1 - y0) * w.z, c1 - c0) * collider.sdf_inverse_voxel;
  return sdf_beyond(c0 + (c1 - c0) * w.z, outside);
}

/* The unit normal along an SDF's gradient; straight up where the gradient vanishes (a medial point). */
vec3 sdf_normal(vec3 gradient)
{
  float size = length(gradient);
  return size > 1.0e-4 ? gradient / size : vec3(0.0, 0.0, 1.0);
}

/* The unit normal of an SDF collider's surface nearest shape-space point p. */
vec3 sdf_normal_at(Collider collider, vec3 p)
{
  vec3 gradient;
  sdf_sample(collider, p, gradient);
  return sdf_normal(gradient);
}
