"""Additive quads by tiles: untextured SPRITE and STRETCHED effects added by screen tiles in compute.

The quads raster.py rasterized (raster_quads.glsl), drawn the way bokeh.py
draws wide discs.  Reads like the algorithm::

    quad_footprint(state -> footprint, frame, color, tile count per particle)  # quad_frame.glsl: the raster's math
    scan, sprite_instances, binning by tile (stable)                           # tile_lists.py, as the bokeh's
    quad_accumulate(one workgroup per tile, a thread per pixel)               # the tile's quads in particle
                                                                              # order, into the additive layer
                                                                              # (QUAD_WALK: a warp's 8x4 pixels
                                                                              # visit the quads that reach them)

Why tiles: a compute GPU's rasterizer is slow, and 4M sparks ~50 px long
(issue 31's fireworks, 1080p) spent nearly all their draw in the rasterized
quads' fill and blending, and packing 16 quads an instance changed nothing
(the figures: bench/results/h200-2026-11-26-viewport-timeline-e762060.json
and h200-2026-11-26-events-59585ef.json).  Binned, every
pixel is one thread summing its tile's quads from shared memory: each pixel
read and written once, without atomics.  Additive quads need no depth order:
the lists stay in particle order, the rasterizer's blending order, and a pixel
gets the fragment's value at its centre (color x quad_falloff), so the two
agree to the target's rounding (the raster target rounds every add to half
float; the gather sums in float32 and rounds once).  Textured quads
(raster.QUADS' textured feature) stay rasterized; the rasterized quads stay
measurable as the peer (bench/quad_peer.py).
"""

from __future__ import annotations

import dataclasses
import weakref
from functools import cache

from ..look.lighting import LOOK_FEATURES
from ..look.look import LOOK_TABLE, PARTICLE_STATE
from ..look.sprite_sheets import is_textured
from ..order.sorting import linear_groups
from ..order.tile_lists import FOOTPRINT_OUTPUTS, TILE_CHUNK, WALKS, FootprintList, KeptLists, tile_kernel
from ..seam.kernels import Image, Kernel, Shared
from ..seam.records import QUAD_AXES
from .footprint import DEPTH_OF_FIELD, MOTION_BLUR, declared_footprint_constants
from .raster import CONSTANTS, INCLUDES, constants, stretch_seconds

ESTIMATED_TILES_PER_PARTICLE = 4.0  # a spark's streak across a few tiles
QUAD_TYPES = ("SPRITE", "STRETCHED")  # the particle types drawn as quads
# The quads' walk (tile_lists.WALKS): BLOCKS, so that a block skips the streaks that pass it by: faster than ALL in
# 1080p-fireworks-4M (bench/results/h100-2026-11-27-viewport-timeline-capsule-{blocks,all}.json).
QUAD_WALK = "BLOCKS"

QUAD_FOOTPRINT = Kernel(
    "quad_footprint",
    features=(MOTION_BLUR, DEPTH_OF_FIELD, *LOOK_FEATURES),  # raster.QUADS' camera and look features
    images=(LOOK_TABLE, *FOOTPRINT_OUTPUTS, Image(QUAD_AXES.resource, "RGBA32F", "WRITE"),
            Image("instance_counts", "R32UI", "WRITE")),
    samplers=PARTICLE_STATE,
    constants=CONSTANTS,
    includes=(*INCLUDES, "quad_frame.glsl", "sprite_shape.glsl"),
)


@cache
def quad_accumulate(layer_format: str = "RGBA16F", walk: str = QUAD_WALK) -> Kernel:
    """The per-tile sum of quads into a ``layer_format`` layer (compositing's raster target: RGBA16F, RGBA32F
    with depth of field); ``walk``: tile_lists.WALKS; its feature tile_lists.DEPTH_TESTED."""
    kernel = tile_kernel("quad_accumulate", Image("layer", layer_format),
                         shared=(Shared("vec4", "s_axes", TILE_CHUNK),), walk=walk,
                         includes=("quad_falloff.glsl", "tile_sum.glsl"))
    return dataclasses.replace(kernel, images=(*kernel.images, Image(QUAD_AXES.resource, "RGBA32F", "READ")),
                               defines=(*kernel.defines, ("QUAD_AXES", "1")))


QUAD_KERNELS = (QUAD_FOOTPRINT,
                *(quad_accumulate(layer, walk) for layer in ("RGBA16F", "RGBA32F") for walk in WALKS))


def is_tiled(settings) -> bool:
    """Whether an additive effect's particles are drawn here (untextured quads) rather than rasterized."""
    return settings.particle_type in QUAD_TYPES and not is_textured(settings)


class QuadFootprints(FootprintList):
    """A FootprintList with each quad's frame (records.QUAD_AXES)."""

    def __init__(self, host, capacity: int):
        super().__init__(host, capacity)
        self.axes = host.texture(QUAD_AXES.resource, self.shapes.width, self.shapes.height, "RGBA32F")


class QuadLayer:
    """Adds the untextured quads of a width x height frame into its additive layer.

    ``check_every``: draws between read-backs of the instance total (``tile_lists.KeptLists``), whose lists
    each effect keeps (``kept``): shared, a check on a small effect would shrink a large one's; ``walk``: the
    sum's (tile_lists.WALKS).
    """

    def __init__(self, host, width: int, height: int, check_every: int = 1, walk: str = QUAD_WALK):
        self.host = host
        self.width, self.height = width, height
        self.check_every = check_every
        self.walk = walk
        self.kept = weakref.WeakKeyDictionary()  # ParticleSystem -> its KeptLists, dropped with it
        self.quads: QuadFootprints | None = None  # grown to the largest effect drawn

    def draw(self, system, camera, target, depth, look) -> None:
        """Add ``system``'s quads into ``target`` (RGBA16F or RGBA32F, as the rasterized ones), hidden behind
        ``depth`` when given; ``look``: its look table."""
        count = system.count
        if count == 0:
            return
        if self.quads is None or self.quads.capacity < count:
            self.quads = QuadFootprints(self.host, count)
        quads = self.quads
        kept = self.kept.get(system)
        if kept is None:
            kept = self.kept[system] = KeptLists(self.host, self.width, self.height, self.check_every,
                                                 ESTIMATED_TILES_PER_PARTICLE)
        kernel = QUAD_FOOTPRINT.for_effect(system.settings, camera=camera)
        stretch = stretch_seconds(system.settings)
        self.host.dispatch(
            kernel, linear_groups(count),
            {"pos_age": system.pos_age, "vel_life": system.vel_life, "look": look, "sprite_shapes": quads.shapes,
             "sprite_streaks": quads.streaks, "sprite_colors": quads.colors, QUAD_AXES.resource: quads.axes,
             "instance_counts": quads.instance_counts, **kernel.bindings(system=system)},
            {**constants(system, camera, stretch, kernel), **declared_footprint_constants(camera, kernel)},
        )
        quads.scan.run(quads.instance_counts, quads.instance_offsets, count, total=kept.total)
        shapes = {"sprite_shapes": quads.shapes, "sprite_streaks": quads.streaks}
        binned = kept.bin(shapes, quads.instance_offsets, count, depth_order=False).binning
        accumulate = quad_accumulate(target.format, self.walk).for_effect(system.settings, depth=depth)
        self.host.dispatch(
            accumulate, (kept.tiles_x, kept.tiles_y, 1),
            {"binned_sprites": binned.items, "tile_counts": binned.counts, "tile_offsets": binned.offsets,
             **shapes, "sprite_colors": quads.colors, QUAD_AXES.resource: quads.axes, "layer": target,
             **accumulate.bindings(depth=depth)},
            {"target_size": (self.width, self.height)},
        )
