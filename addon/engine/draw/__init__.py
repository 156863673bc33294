"""Drawing a frame: scene depth, the Add layer, quads, trails, bokeh, sprites, glints, readback."""
