"""References (numpy) of the look room's kernels."""
