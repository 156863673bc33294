"""Reading the Blender scene into the engine's plain data: the snapshot, the object index, the inputs, the
timeline over scene frames, the disk cache, the depth pre-pass, the CSG scene and the renderer that gathers them."""
