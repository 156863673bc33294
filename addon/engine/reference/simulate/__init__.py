"""References (numpy) of the simulate room's kernels."""
