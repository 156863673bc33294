"""What the stages of a frame share on the GPU, apart from any one of them.

Made once per target size by whoever draws the frames (``scene/renderer.py``,
``viewport.py``, a test or a benchmark) and handed to the stages: the
compositor's Add layer, the sprites, the light pass and the render layer all
read the same look textures, sprite sheets and scene depth and draw into the
same targets, so none of them reaches into another for them.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..look.look import LOOK_SIZE, look_table
from ..look.sprite_sheets import SpriteSheets
from ..settings.settings import SettingsError
from .depth import SceneDepth

MAX_LOOK_TEXTURES = 16  # look tables kept on the GPU per target size (one per effect and ramp)


class FrameResources:
    """The float frame, the rasterized layer, the scene depth (when occlusion is on), the look textures and
    the sprite sheets of one target size."""

    def __init__(self, host, width: int, height: int):
        if not (1 <= width <= host.max_texture_size and 1 <= height <= host.max_texture_size):
            raise SettingsError(f"resolution {width}x{height} is beyond this GPU's texture limit of {host.max_texture_size}")
        self.host = host
        self.width, self.height = width, height
        self.rasterized = False  # something was drawn into the raster layer since the last resolve
        self.depth: SceneDepth | None = None
        self._looks = {}  # (settings, ramp bytes) -> look texture
        self._sheets: SpriteSheets | None = None

    @cached_property
    def frame(self):
        """The float RGBA frame the compositor resolves into, made at the first use (after the compositor
        refused a size its accumulation cannot hold)."""
        return self.host.texture("frame", self.width, self.height, "RGBA32F")

    @cached_property
    def raster(self):
        """The rasterized layer, half floats until a frame with depth of field asks for more (raster_target)."""
        return self.host.texture("raster", self.width, self.height, "RGBA16F")

    def use_depth(self, depth: SceneDepth | None) -> None:
        """Test particles against this scene depth from now on (its coarse range must be built)."""
        if depth is not None and (depth.width, depth.height) != (self.width, self.height):
            raise ValueError(f"depth {depth.width}x{depth.height} does not match the target {self.width}x{self.height}")
        self.depth = depth

    @property
    def depth_image(self):
        """The scene depth's image, None without scene depth."""
        return self.depth.depth if self.depth else None

    def raster_target(self, camera):
        """The rasterized layer, cleared before the frame's first draw into it.

        Half floats, or full floats in frames with depth of field: a bokeh disc
        (an image the bokeh pass reads and writes: RGBA32F) spreads a particle thinly over many pixels, and half floats would round
        most of those small adds away where discs pile up.
        """
        if not self.rasterized:
            wanted = "RGBA32F" if camera.focus is not None else "RGBA16F"
            if self.raster.format != wanted:
                self.raster = self.host.texture("raster", self.width, self.height, wanted)
            self.host.clear(self.raster)
            self.rasterized = True
        return self.raster

    @property
    def sheets(self) -> SpriteSheets:
        """The sprite images effects name, on the GPU (sprite_sheets.py), made at the first use."""
        if self._sheets is None:
            self._sheets = SpriteSheets(self.host)
        return self._sheets

    def look_texture(self, system):
        """The effect's look table as a texture (look.py), made again only when what it follows from changes:
        the settings and the ramp (looked up on every draw, the table not worked out each time)."""
        ramp = system.ramp
        key = (system.settings, None if ramp is None else np.asarray(ramp, np.float32).tobytes())
        texture = self._looks.pop(key, None)
        if texture is None:
            texture = self.host.texture("look", LOOK_SIZE, 1, "RGBA32F", look_table(system.settings, ramp))
        self._looks[key] = texture  # most recently used last
        while len(self._looks) > MAX_LOOK_TEXTURES:
            self._looks.pop(next(iter(self._looks)))
        return texture
