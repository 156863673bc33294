"""References (numpy) of the light room's kernels."""
