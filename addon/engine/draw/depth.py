"""Scene depth for the splat: the opaque geometry's depth and its 16x16-tile range.

The depth texture itself comes from a depth-only pre-pass of the scene's
meshes (``addon/scene/depth_prepass.py`` in Blender; the benchmark uploads one).
:class:`SceneDepth` turns it into the coarse image the splat reads first.
"""

from __future__ import annotations

from ..seam.kernels import Constant, Image, Kernel, Raster, Sampler, Shared

TILE = 16

# The depth-only draw of the scene's opaque meshes (addon/scene/depth_prepass.py; Blender only: it draws
# Blender's meshes), declared here beside the kernel that reads its depth.
DEPTH_PREPASS = Raster(
    "depth_prepass",
    constants=(Constant("MAT4", "view_proj"), Constant("MAT4", "model")),
    includes=(),
    vertex_inputs=(("VEC3", "position"),),
)

COARSE_DEPTH = Kernel(
    "coarse_depth",
    images=(Image("coarse_depth", "RGBA32F", "WRITE"),),
    samplers=(Sampler("scene_depth"),),
    constants=(Constant("IVEC2", "target_size"),),
    shared=(Shared("float", "tile_min", TILE * TILE), Shared("float", "tile_max", TILE * TILE)),
    local_size=(TILE, TILE, 1),
)


class SceneDepth:
    """A full-resolution depth texture (window depth, 0 near .. 1 far) and its tile ranges."""

    def __init__(self, host, width: int, height: int):
        self.host = host
        self.width, self.height = width, height
        self.depth = host.texture("scene_depth", width, height, "DEPTH32F")
        self.host.clear(self.depth, 1.0)
        self.coarse = host.texture("coarse_depth", -(-width // TILE), -(-height // TILE), "RGBA32F")

    def build_coarse(self) -> None:
        """Tile min/max of the current depth (after the pre-pass drew it), one dispatch."""
        self.host.dispatch(
            COARSE_DEPTH, COARSE_DEPTH.groups_for(self.width, self.height),
            {"coarse_depth": self.coarse, "scene_depth": self.depth},
            {"target_size": (self.width, self.height)},
        )

    @property
    def textures(self) -> dict:
        return {"coarse_depth": self.coarse, "scene_depth": self.depth}
