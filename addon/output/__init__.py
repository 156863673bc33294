"""Frames out of the engine: the bake, the frame writers and formats, the final-render integration (the particle
layer and the compositor nodes), the display transform and the point-cloud export."""
