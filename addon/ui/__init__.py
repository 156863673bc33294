"""What the artist touches: the sidebar panels, the operators, the cache and CSG panels, the modal job runner."""
