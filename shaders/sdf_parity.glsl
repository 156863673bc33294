/* Ray parity, step two: one invocation per column of voxels along one axis
 * (the dispatch's y is the axis) runs the crossings' flips from the grid's
 * start, so bit 3 + axis of a voxel says whether a ray from outside the grid
 * to its centre crossed the surface an odd number of times.  A column that
 * crosses an odd number of times in all (through a hole, past an open
 * sheet) says nothing: the rays from its two ends disagree, so it sets bit
 * SDF_ABSTAIN_SHIFT + axis along the column instead and the axes that voted
 * decide (sdf_write).  Only bits 3..8 are written (imageAtomicOr); the flips
 * in bits 0..2 stay as read. */

void main()
{
  int axis = int(gl_WorkGroupID.y);
  int u = (axis + 1) % 3, w = (axis + 2) % 3;
  ivec3 size = imageSize(sdf_parity);
  int column = int(gl_GlobalInvocationID.x);
  if (column >= size[u] * size[w]) {
    return;
  }
  ivec3 voxel;
  voxel[u] = column % size[u];
  voxel[w] = column / size[u];
  uint crossings = 0u;
  for (int i = 0; i < size[axis]; i++) {
    voxel[axis] = i;
    crossings ^= (imageLoad(sdf_parity, voxel).x >> uint(axis)) & 1u;
  }
  if (crossings != 0u) {
    for (int i = 0; i < size[axis]; i++) {
      voxel[axis] = i;
      imageAtomicOr(sdf_parity, voxel, 1u << uint(SDF_ABSTAIN_SHIFT + axis));
    }
    return;
  }
  uint inside = 0u;
  for (int i = 0; i < size[axis]; i++) {
    voxel[axis] = i;
    inside ^= (imageLoad(sdf_parity, voxel).x >> uint(axis)) & 1u;
    if (inside != 0u) {
      imageAtomicOr(sdf_parity, voxel, 1u << uint(SDF_PARITY_SHIFT + axis));
    }
  }
}
