/* Winding numbers along the axes, step two: one invocation per column of
 * voxels along one axis (the dispatch's y is the axis) sums the crossings
 * sdf_crossings counted from the grid's start: at each voxel, the crossings
 * facing against the axis less those facing along it is the winding number
 * of the ray from outside the grid to the voxel's centre, and not 0 is inside
 * (the nonzero rule: a voxel inside two overlapping shells winds twice; an
 * inward-wound mesh winds -1).  A column whose crossings do not sum to 0 in
 * all (through a hole, past an open sheet's rim), or with a count that
 * saturated, says nothing: it votes SDF_VOTE_ABSTAIN along the column and the
 * axes that voted decide (sdf_write).  Each voxel's axis field is replaced by
 * its vote (one imageAtomicXor: the other axes' invocations share the word). */

uint sdf_axis_field(ivec3 voxel, uint shift)
{
  return (imageLoad(sdf_winding, voxel).x >> shift) & ((1u << uint(SDF_AXIS_BITS)) - 1u);
}

/* Crossings facing against the axis less those facing along it. */
int sdf_net_crossings(uint field)
{
  return int(field >> uint(SDF_CROSSING_BITS)) - int(field & SDF_CROSSING_LIMIT);
}

void main()
{
  int axis = int(gl_WorkGroupID.y);
  int u = (axis + 1) % 3, w = (axis + 2) % 3;
  ivec3 size = imageSize(sdf_winding);
  int column = int(gl_GlobalInvocationID.x);
  if (column >= size[u] * size[w]) {
    return;
  }
  uint shift = uint(SDF_AXIS_BITS * axis);
  ivec3 voxel;
  voxel[u] = column % size[u];
  voxel[w] = column / size[u];
  int total = 0;
  bool saturated = false;
  for (int i = 0; i < size[axis]; i++) {
    voxel[axis] = i;
    uint field = sdf_axis_field(voxel, shift);
    total += sdf_net_crossings(field);
    saturated = saturated || (field & SDF_CROSSING_LIMIT) == SDF_CROSSING_LIMIT ||
                (field >> uint(SDF_CROSSING_BITS)) == SDF_CROSSING_LIMIT;
  }
  bool abstains = total != 0 || saturated;
  int winding = 0;
  for (int i = 0; i < size[axis]; i++) {
    voxel[axis] = i;
    uint field = sdf_axis_field(voxel, shift);
    winding += sdf_net_crossings(field);
    uint vote = abstains ? SDF_VOTE_ABSTAIN : (winding != 0 ? SDF_VOTE_INSIDE : 0u);
    if (field != vote) { /* most voxels: no crossing, outside */
      imageAtomicXor(sdf_winding, voxel, (field ^ vote) << shift);
    }
  }
}
