"""References (numpy) of the order room's kernels."""
