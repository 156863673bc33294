"""The particle layer's depth: the nearest particle's view depth in every pixel its light covers.

The render integration (``addon/output/render_layer.py``) hands it to Blender's
compositor beside the particle light, which compares it with the render's own
depth pass: light shows where the nearest particle is in front of the scene.
So every pixel a particle lights must carry a depth, however wide its footprint:
a particle marks its reach (``footprint.glsl``'s ``Reach``: the splat's taps
along its motion-blur streak and over its circle of confusion, a bokeh disc, a
sprite), an atomic min on the float bits into an R32UI image cleared to
:data:`FAR`.  One dispatch per effect over its slots (``particle_depth.glsl``)
marks the reaches up to DIRECT_REACH pixels from their center pixel by pixel;
wider ones (long streaks, wide discs and sprites: a thread would loop over
thousands of pixels) go into a footprint list, binned by screen tile like the
bokeh discs, and one workgroup a tile marks them a thread a pixel
(``particle_depth_tiles.glsl``).  Trails mark their segments, a thread a segment (``trail_depth.glsl``), so
a trail passing behind an object is hidden where it is behind.

Variants: the depth kernel by state layout (a shape); wide reaches and the camera's focus are features.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..look.lighting import LOOK_FEATURES
from ..look.look import LOOK_TABLE, PARTICLE_STATE, particle_values
from ..look.sprite_sheets import is_textured
from ..order.sorting import linear_groups
from ..order.tile_lists import FOOTPRINT_OUTPUTS, FootprintList, KeptLists, tile_kernel
from ..seam.kernels import Constant, Feature, Image, Kernel
from ..seam.state import LAYOUTS
from . import ribbons
from .compositing import SPLAT_CONSTANTS, Camera
from .footprint import DEPTH_OF_FIELD, MOTION_BLUR, footprint_constants
from .raster import stretch_seconds

# Depth where no particle is: beyond Blender's own "nothing hit" depth (1e10).  2^34's bit pattern is
# also a whole float32, which matters: Blender's texture clear carries its value through a float.
FAR = float(2**34)
FAR_BITS = int(np.float32(FAR).view(np.uint32))
DIRECT_REACH = 8.0  # pixels from its center (half path plus radius) a reach marked by its own thread spans at most
# How a particle's light covers pixels (particle_depth.glsl's reach_kind): a point of the splat (its taps,
# its streak and circle of confusion, a bokeh disc), or a sprite or quad of its own radius.
REACH_KINDS = {"POINT": 0, "SPRITE": 1, "TEXTURED": 2, "QUAD": 3}  # TEXTURED: a sprite image's square, sqrt(2)
# times wider; QUAD: an additive round quad, as far as its pixel filter's tail and its lens reach (raster_quads.glsl)
ESTIMATED_TILES_PER_PARTICLE = 0.25  # most reaches are narrow and marked directly


VIEW_DEPTH = Constant("VEC4", "view_depth", components=(  # world position to depth along the camera axis
    ("view_axis", "xyz"), ("view_offset", "w")))
DEPTH_IMAGE = Image("particle_depth", "R32UI", atomic=True)


# A particle whose light can reach beyond DIRECT_REACH (the camera's motion blur or depth of field, or a sprite's
# or quad's own size) writes its reach to the footprint list (otherwise none can be wide).
WIDE_LIST = Feature("wide_list", defines=(("WIDE_LIST", "1"),),
                    images=(*FOOTPRINT_OUTPUTS[:2], Image("instance_counts", "R32UI", "WRITE")),
                    includes=("sprite_shape.glsl",),
                    wants=lambda settings, frame: _reaches_wide(settings, frame["camera"]),
                    binds=lambda reaches: {"sprite_shapes": reaches.shapes, "sprite_streaks": reaches.streaks,
                                           "instance_counts": reaches.instance_counts}, source="reaches")


def _reaches_wide(settings, camera) -> bool:
    return camera.shutter is not None or camera.focus is not None or reach_kind(settings) != "POINT"


def _depth_kernel(layout) -> Kernel:
    """Over ``layout``'s state; its features the camera's (MOTION_BLUR, DEPTH_OF_FIELD), WIDE_LIST, the look's."""
    return Kernel(
        "particle_depth",
        features=(MOTION_BLUR, DEPTH_OF_FIELD, WIDE_LIST, *LOOK_FEATURES),
        images=(*layout.images("READ"), DEPTH_IMAGE, Image("look", "RGBA32F", "READ")),
        constants=(*SPLAT_CONSTANTS, VIEW_DEPTH, Constant("INT", "reach_kind"), Constant("FLOAT", "stretch_seconds")),
        includes=("common.glsl", "random.glsl", "look.glsl", "particle_alive.glsl", "particle_look.glsl", "particle_read.glsl",
                  "footprint.glsl"),
        defines=(("DIRECT_REACH", f"{DIRECT_REACH:.1f}"),
                 *((f"REACH_{kind}", str(code)) for kind, code in REACH_KINDS.items())),
    )


PARTICLE_DEPTH_KERNELS = {name: _depth_kernel(layout) for name, layout in LAYOUTS.items()}
_TILES = tile_kernel("particle_depth_tiles", DEPTH_IMAGE)
PARTICLE_DEPTH_TILES = dataclasses.replace(_TILES, includes=(*_TILES.includes, "footprint.glsl"),
                                           defines=(*_TILES.defines, ("FAR_BITS", f"{FAR_BITS}u")),
                                           features=())  # it marks the particles' depths, testing none


# Trails (ribbons.py): a segment an invocation; with motion blur the head at shutter close, as they are drawn.
TRAIL_DEPTH = Kernel(
    "trail_depth",
    features=(MOTION_BLUR, *LOOK_FEATURES),
    images=(DEPTH_IMAGE, LOOK_TABLE),
    samplers=(*PARTICLE_STATE, *ribbons.RING),
    constants=(*SPLAT_CONSTANTS, VIEW_DEPTH, *ribbons.TRAIL_CONSTANTS),
    includes=("common.glsl", "random.glsl", "look.glsl", "particle_alive.glsl", "particle_look.glsl", "particle_fetch.glsl",
              *ribbons.TRAIL_INCLUDES),
)


def view_depth_row(world_to_view: np.ndarray) -> np.ndarray:
    """The plane whose dot with a world position is its depth along the camera axis (Blender's -Z forward)."""
    return -np.asarray(world_to_view, np.float64)[2]


def reach_kind(settings) -> str:
    """How an effect's light covers pixels: alpha sprites by their own radius (a sprite image's square:
    TEXTURED), additive round sprites and stretched quads as raster_quads draws them (QUAD), additive points
    by the splat's footprint."""
    if is_textured(settings):
        return "TEXTURED"
    if settings.blend_mode == "ALPHA":
        return "SPRITE"
    return "POINT" if settings.particle_type == "POINT" else "QUAD"


class ParticleDepth:
    """The nearest-particle depth image of a target, filled effect by effect."""

    def __init__(self, host, width: int, height: int):
        self.host = host
        self.width, self.height = width, height
        self.image = host.texture("particle_depth", width, height, "R32UI")
        self.kept = KeptLists(host, width, height, 1, ESTIMATED_TILES_PER_PARTICLE)
        self.reaches: FootprintList | None = None  # grown to the largest effect with wide reaches

    def clear(self) -> None:
        self.host.clear(self.image, FAR_BITS)

    def add(self, system, camera: Camera, world_to_view: np.ndarray, look) -> None:
        """Every live particle of ``system`` (a ParticleSystem or CSG cloud), with its look table ``look``,
        over the footprint ``camera``'s shutter and focus give it."""
        count = system.count
        kernel = PARTICLE_DEPTH_KERNELS[system.layout.name].for_effect(system.settings, camera=camera)
        listed = WIDE_LIST.name in kernel.chosen
        if listed and (self.reaches is None or self.reaches.capacity < count):
            self.reaches = FootprintList(self.host, count)
        images = {**system.textures, "particle_depth": self.image, "look": look,
                  **kernel.bindings(system=system, reaches=self.reaches)}
        groups_x, rows, _ = system.groups
        self.host.dispatch(
            kernel, (groups_x, rows, 1), images,
            {
                **footprint_constants(camera, disc=False),
                "count": count,
                "target_size": (self.width, self.height),
                "view_proj": camera.view_proj,
                **particle_values(system),
                "quantize": (0.0, 0.0, 0.0, camera.pixels_per_unit),
                "view_depth": view_depth_row(world_to_view),
                "reach_kind": REACH_KINDS[reach_kind(system.settings)],
                "stretch_seconds": stretch_seconds(system.settings),
            },
        )
        if listed and count:
            self._mark_wide(count)
        if getattr(system, "trails", None) is not None:
            self._mark_trails(system, camera, world_to_view, look)

    def _mark_trails(self, system, camera: Camera, world_to_view: np.ndarray, look) -> None:
        """The segments of ``system``'s trails (trail_depth.glsl)."""
        kernel = TRAIL_DEPTH.for_effect(system.settings, camera=camera)
        self.host.dispatch(
            kernel, linear_groups(system.count * system.settings.trail_points),
            {"pos_age": system.pos_age, "vel_life": system.vel_life, **system.trails.textures,
             "particle_depth": self.image, "look": look, **kernel.bindings(system=system)},
            {**ribbons.trail_values(system, camera, kernel), "count": system.count,
             "target_size": (self.width, self.height), "view_proj": camera.view_proj, **particle_values(system),
             "quantize": (0.0, 0.0, 0.0, camera.pixels_per_unit), "view_depth": view_depth_row(world_to_view)},
        )

    def _mark_wide(self, count: int) -> None:
        """The listed wide reaches, binned by tile, marked a thread a pixel."""
        reaches = self.reaches
        reaches.scan.run(reaches.instance_counts, reaches.instance_offsets, count, total=self.kept.total)
        shapes = {"sprite_shapes": reaches.shapes, "sprite_streaks": reaches.streaks}
        binned = self.kept.bin(shapes, reaches.instance_offsets, count, depth_order=False).binning
        self.host.dispatch(
            PARTICLE_DEPTH_TILES, (self.kept.tiles_x, self.kept.tiles_y, 1),
            {"binned_sprites": binned.items, "tile_counts": binned.counts, "tile_offsets": binned.offsets,
             **shapes, "sprite_colors": reaches.colors, "particle_depth": self.image},
            {"target_size": (self.width, self.height)},
        )

    def read(self) -> np.ndarray:
        """Depth in scene units (height, width), rows bottom to top; FAR where no particle is."""
        return self.host.read(self.image).reshape(self.height, self.width).view(np.float32).copy()
