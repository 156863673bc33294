"""The seam between Python and GLSL: kernel declarations, records, tables, random, the particle state."""
