"""Effect and render settings (one table of fields) and the presets that fill them."""
