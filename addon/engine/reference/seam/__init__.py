"""References (numpy) of the seam room's kernels."""
