"""The light pass: lit particles and the shadow volume they shadow each other in."""
