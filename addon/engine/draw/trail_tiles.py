"""Additive trails by tiles: the segments of Add effects' trails added by screen tiles in compute.

trails.py keeps each particle's last positions; ribbons.py draws them as
rasterized ribbons (trail_draw RIBBONS) and as Alpha effects' sprites.  Here
(trail_draw SPLAT, the default), the way quad_tiles.py draws additive quads.
Reads like the algorithm::

    trail_footprint(state, ring -> a footprint a segment, tile counts)  # the band from end a to b, colors,
                                                                         # half widths and depths at both ends
    scan, sprite_instances, binning by tile (stable)                     # tile_lists.py, as the quads'
    trail_accumulate(one workgroup per tile, a thread per pixel)         # the tile's segments in particle and
                                                                         # segment order, into the additive layer;
                     (a long list: up to TRAIL_SLICES workgroups)        # or runs of its chunks into partial sums
    tile_combine(partial sums -> the layer, in slice order)              # tile_lists.TileSlices

Why tiles: a thread a segment adding each covered pixel with atomics into the
splat's integer accumulation (trail_splat.glsl, which this replaced) spent
most of 1M particles' 32-point trails' draw at 1080p (issue 31) in returning
atomic pairs over a high coverage, and overflowed its channels in a dense
comet's head (the figures:
bench/results/h100-2026-11-27-viewport-timeline-trail-table-base.json).
Binned, every pixel is one thread summing its tile's segments from shared
memory in float32, read and written once, without atomics, into
the layer the resolve adds to the splat (compositing's raster target: half
floats, rounded once a draw).  A segment's footprint is the capsule its band
fills (sprite_shape.glsl: center, reach, streak b - a), so a segment of zero
length, off the target, past the ring's filled points (a young particle's) or
behind the camera gets no tiles.  The pixels a segment adds to, and how much,
are trail_splat's (reference.trails.tiled_segments); the rasterized ribbons
(ribbons.py) stay as the peer bench/blender_gpu.py measures.
"""

from __future__ import annotations

import dataclasses
import weakref
from functools import cache

from ..look.lighting import LOOK_FEATURES
from ..look.look import LOOK_TABLE, PARTICLE_STATE
from ..order.sorting import linear_groups
from ..order.tile_lists import (
    FOOTPRINT_OUTPUTS,
    TILE,
    TILE_CHUNK,
    TILE_PARTIALS,
    WALKS,
    FootprintList,
    KeptLists,
    TileSlices,
    slices_within,
    tile_combine,
    tile_kernel,
)
from ..seam.kernels import Constant, Image, Kernel, Shared
from ..seam.records import TRAIL_END
from .footprint import MOTION_BLUR
from .ribbons import DRAW_CONSTANTS, DRAW_INCLUDES, RING, draw_constants

ESTIMATED_TILES_PER_SEGMENT = 1.5  # a segment spans a few pixels: one tile, two where it crosses an edge
# Segments footprinted, binned and added at once (72 bytes of scratch each: 2.4 GB); an effect with more (up to
# trails.TRAIL_MEMORY_LIMIT's 512M) is drawn in batches, in order: the same sums, the layer rounding once a batch.
MAX_BATCH_SEGMENTS = 1 << 25
# How a tile's pixels go through its segments (tile_lists.WALKS): BLOCKS, as the alpha sprites, for footprints a
# few pixels across in tiles of thousands (the comet's head): faster than ALL at 1080p-1M-trails32, alternating on
# one machine (bench/results/h100-2026-11-27-viewport-timeline-trail-walk-{blocks,all}*.json).
TRAIL_WALK = "BLOCKS"
# Workgroups a tile's list is split over when longer than a chunk (tile_lists.TileSlices): the comet's head puts
# most of its segment instances into a few of the frame's tiles (counted in
# bench/results/llvmpipe-2026-11-27-events-trail-coverage.json), which one workgroup a tile serialized
# (h100-2026-11-27-events-trail-tiles.json, against h100-2026-11-27-events-trail-slices.json).  The partial sums
# cost 33 MB a slice at 1080p: fewer slices where they would pass tile_lists.PARTIALS_MEMORY (8 at 4K).
TRAIL_SLICES = 32

TRAIL_FOOTPRINT = Kernel(
    "trail_footprint",
    features=(MOTION_BLUR, *LOOK_FEATURES),  # the head at shutter close (where the splat's streak ends)
    images=(LOOK_TABLE, *FOOTPRINT_OUTPUTS, Image(TRAIL_END.resource, "RGBA32F", "WRITE"),
            Image("instance_counts", "R32UI", "WRITE")),
    samplers=(*PARTICLE_STATE, *RING),
    constants=(*DRAW_CONSTANTS, Constant("INT", "first_segment")),  # the batch's first
    includes=(*DRAW_INCLUDES, "sprite_shape.glsl"),
)


@cache
def trail_accumulate(layer_format: str = "RGBA16F", walk: str = TRAIL_WALK, slices: int = TRAIL_SLICES) -> Kernel:
    """The per-tile sum of segments into a ``layer_format`` layer (compositing's raster target: RGBA16F, RGBA32F
    with depth of field); ``walk``: tile_lists.WALKS; ``slices``: workgroups a long list is split over (1: none;
    more: into partial sums, the layer not bound, its format then the combine's: tile_lists.tile_combine); its
    feature tile_lists.DEPTH_TESTED."""
    kernel = tile_kernel("trail_accumulate", Image("layer", layer_format),
                         shared=(Shared("vec4", "s_ends", TILE_CHUNK),), walk=walk, includes=("tile_sum.glsl",),
                         slices=slices)
    return dataclasses.replace(kernel, images=(*kernel.images, Image(TRAIL_END.resource, "RGBA32F", "READ")),
                               defines=(*kernel.defines, ("TRAIL_END", "1")))


# Each kernel once: sliced, trail_accumulate does not bind the layer, so both formats declare the same one.
TRAIL_TILE_KERNELS = tuple(dict.fromkeys((
    TRAIL_FOOTPRINT,
    *(trail_accumulate(layer, walk) for layer in ("RGBA16F", "RGBA32F") for walk in WALKS),
    *(tile_combine(layer, TRAIL_SLICES) for layer in ("RGBA16F", "RGBA32F")))))


class SegmentFootprints(FootprintList):
    """A FootprintList with each segment's far end (records.TRAIL_END)."""

    def __init__(self, host, capacity: int):
        super().__init__(host, capacity)
        self.ends = host.texture(TRAIL_END.resource, self.shapes.width, self.shapes.height, "RGBA32F")


class TrailLayer:
    """Adds the trails of Add effects of a width x height frame into its additive layer.

    ``check_every``: draws between read-backs of the instance total (``tile_lists.KeptLists``), whose lists
    each effect keeps (``kept``); ``walk``: tile_lists.WALKS; ``slices``: workgroups a long tile list is split
    over (TRAIL_SLICES, fewer where their partial sums would take too much memory: tile_lists.slices_within;
    1: none).
    """

    def __init__(self, host, width: int, height: int, check_every: int = 1, walk: str = TRAIL_WALK,
                 slices: int = TRAIL_SLICES):
        self.host = host
        self.width, self.height = width, height
        self.check_every = check_every
        self.walk = walk
        self.slices = slices_within(host, -(-width // TILE) * -(-height // TILE), slices)
        self.partials: TileSlices | None = None  # made on the first draw with slices
        self.kept = weakref.WeakKeyDictionary()  # ParticleSystem -> its KeptLists, dropped with it
        self.segments: SegmentFootprints | None = None  # grown to the largest batch drawn

    def draw(self, system, camera, target, depth, look) -> None:
        """Add ``system``'s trails into ``target`` (RGBA16F or RGBA32F), hidden behind ``depth`` when given;
        ``look``: its look table."""
        total = system.count * system.settings.trail_points
        if total == 0:
            return
        batch = min(total, MAX_BATCH_SEGMENTS)
        if self.segments is None or self.segments.capacity < batch:
            self.segments = SegmentFootprints(self.host, batch)
        kept = self.kept.get(system)
        if kept is None:
            kept = self.kept[system] = KeptLists(self.host, self.width, self.height, self.check_every,
                                                 ESTIMATED_TILES_PER_SEGMENT)
        kernel = TRAIL_FOOTPRINT.for_effect(system.settings, camera=camera)
        values = draw_constants(system, camera, kernel)
        for first in range(0, total, batch):
            self._add_batch(system, kernel, {**values, "first_segment": first}, min(batch, total - first), kept,
                            target, depth, look)

    def _add_batch(self, system, kernel, values, count, kept, target, depth, look) -> None:
        """Footprints of ``count`` segments from ``values``' first_segment on, binned and added."""
        segments = self.segments
        shapes = {"sprite_shapes": segments.shapes, "sprite_streaks": segments.streaks}
        footprints = {**shapes, "sprite_colors": segments.colors, TRAIL_END.resource: segments.ends}
        self.host.dispatch(
            kernel, linear_groups(count),
            {"pos_age": system.pos_age, "vel_life": system.vel_life, "look": look, **system.trails.textures,
             **footprints, "instance_counts": segments.instance_counts, **kernel.bindings(system=system)},
            values,
        )
        segments.scan.run(segments.instance_counts, segments.instance_offsets, count, total=kept.total)
        binned = kept.bin(shapes, segments.instance_offsets, count, depth_order=False).binning
        sliced = self.slices > 1
        if sliced and self.partials is None:
            self.partials = TileSlices(self.host, kept.tiles_x, kept.tiles_y, self.slices)
        accumulate = trail_accumulate(target.format, self.walk, self.slices).for_effect(system.settings, depth=depth)
        self.host.dispatch(
            accumulate, (kept.tiles_x, kept.tiles_y, self.slices),
            {"binned_sprites": binned.items, "tile_counts": binned.counts, "tile_offsets": binned.offsets,
             **footprints, **({TILE_PARTIALS: self.partials.partials} if sliced else {"layer": target}),
             **accumulate.bindings(depth=depth)},
            {"target_size": (self.width, self.height)},
        )
        if sliced:
            self.partials.combine(binned.counts, target, (self.width, self.height))
