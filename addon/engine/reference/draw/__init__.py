"""References (numpy) of the draw room's kernels."""
