"""References (numpy) of the primitives room's kernels."""
