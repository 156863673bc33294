"""The light pass: lit particles and the shadow volume they shadow each other in; the VDB grids of an effect."""
