"""Engine core: settings, presets, kernel declarations, the recording, the numpy reference (no bpy)."""
