"""Bokeh: circles of confusion wider than the footprint splat takes, as flat discs added by tiles in compute.

Depth of field spreads each point over its circle of confusion (footprint.py);
circles up to SPLAT_MAX_RADIUS pixels go through the footprint splat, wider
ones come here.  Each is a flat disc whose rim fades over one pixel, swept
along its shutter path with motion blur, carrying the particle's energy spread
evenly over its area (the normalisation of the rasterized sprites this
replaces, kept as the benchmark's peer in bench/bokeh_peer.py).  Reads like
the algorithm::

    bokeh_discs(state -> footprint, color, tile count per particle)   # radius 0 for the splatted ones
    scan, sprite_instances, binning by tile (stable)                   # tile_lists.py, shared with the sprites
    bokeh_accumulate(one workgroup per tile, a thread per pixel)      # the tile's discs in list order, into
                                                                      # the additive layer the resolve adds

Why tiles in compute rather than rasterized quads: a compute GPU's rasterizer
is slow (graphics units in two TPCs of an H100; measured: bench/results/h100-2026-11-23.json,
*_bokeh against *_bokeh_raster); binned, every pixel is one thread of the
whole chip summing its tile's discs from shared memory.  Additive discs need
no depth order, so the lists stay in particle order; a disc touches few tiles
(an 8 px disc 4 to 9), so the instance lists stay small; each pixel is read
and written once, without atomics.  The sum starts from the layer's value and
adds discs in particle order, as the rasterizer's blending did, so the two
agree to the rounding of where each computes a pixel's distance from the disc.
"""

from __future__ import annotations

from ..look.lighting import LOOK_FEATURES
from ..look.look import COLOR_END, COLOR_START, LOOK_RANDOM, LOOK_SEED, LOOK_TABLE, PARTICLE_STATE, particle_values
from ..order.sorting import linear_groups
from ..order.tile_lists import FOOTPRINT_OUTPUTS, FootprintList, KeptLists, tile_kernel
from ..seam.kernels import Constant, Image, Kernel
from .footprint import FOCUS, MOTION_BLUR, footprint_constants

ESTIMATED_TILES_PER_PARTICLE = 1.0  # most particles are splatted; a wide disc touches a few tiles

BOKEH_DISCS = Kernel(
    "bokeh_discs",
    features=(MOTION_BLUR, *LOOK_FEATURES),  # swept over the camera's shutter
    images=(LOOK_TABLE, *FOOTPRINT_OUTPUTS, Image("instance_counts", "R32UI", "WRITE")),
    samplers=PARTICLE_STATE,
    constants=(
        Constant("INT", "count"),
        Constant("MAT4", "view_proj"),
        COLOR_START,
        COLOR_END,
        Constant("VEC4", "bokeh_params", components=(
            ("pixel_scale", "x"),  # pixels per world unit at clip w = 1
            ("target_extent", "zw"),  # the target's width and height in pixels
        )),
        Constant("VEC4", "state_origin"),  # xyz: what stored positions are relative to (simulation.py)
        LOOK_RANDOM,
        LOOK_SEED,
        FOCUS,
    ),
    includes=("common.glsl", "random.glsl", "look.glsl", "particle_alive.glsl", "particle_look.glsl", "footprint.glsl", "sprite_shape.glsl"),
    defines=(("DEPTH_OF_FIELD", "1"),),
)


# The per-tile sum of discs (its feature: tile_lists.DEPTH_TESTED).
BOKEH_ACCUMULATE = tile_kernel("bokeh_accumulate", Image("layer", "RGBA32F"), includes=("tile_sum.glsl",))
BOKEH_KERNELS = (BOKEH_DISCS, BOKEH_ACCUMULATE)


class BokehLayer:
    """Adds the wide circles of confusion of a width x height frame into its additive layer.

    ``check_every``: draws between read-backs of the instance total (``tile_lists.KeptLists``).
    """

    def __init__(self, host, width: int, height: int, check_every: int = 1):
        self.host = host
        self.width, self.height = width, height
        self.kept = KeptLists(host, width, height, check_every, ESTIMATED_TILES_PER_PARTICLE)
        self.discs: FootprintList | None = None  # grown to the largest effect drawn

    def draw(self, system, camera, target, depth, look) -> None:
        """Add ``system``'s particles whose circle of confusion (``camera.focus``) is wider than the splat
        takes into ``target`` (RGBA32F), hidden behind ``depth`` when given; ``look``: its look table."""
        count = system.count
        if count == 0:
            return
        if self.discs is None or self.discs.capacity < count:
            self.discs = FootprintList(self.host, count)
        discs = self.discs
        kernel = BOKEH_DISCS.for_effect(system.settings, camera=camera)
        self.host.dispatch(
            kernel, linear_groups(count),
            {"pos_age": system.pos_age, "vel_life": system.vel_life, "look": look, "sprite_shapes": discs.shapes,
             "sprite_streaks": discs.streaks, "sprite_colors": discs.colors, "instance_counts": discs.instance_counts,
             **kernel.bindings(system=system)},
            {
                **footprint_constants(camera, disc=False),
                "count": count,
                "view_proj": camera.view_proj,
                **particle_values(system),
                "bokeh_params": (camera.pixels_per_unit, 0.0, camera.width, camera.height),
            },
        )
        discs.scan.run(discs.instance_counts, discs.instance_offsets, count, total=self.kept.total)
        shapes = {"sprite_shapes": discs.shapes, "sprite_streaks": discs.streaks}
        binned = self.kept.bin(shapes, discs.instance_offsets, count, depth_order=False).binning
        accumulate = BOKEH_ACCUMULATE.for_effect(system.settings, depth=depth)
        self.host.dispatch(
            accumulate, (self.kept.tiles_x, self.kept.tiles_y, 1),
            {"binned_sprites": binned.items, "tile_counts": binned.counts, "tile_offsets": binned.offsets,
             **shapes, "sprite_colors": discs.colors, "layer": target, **accumulate.bindings(depth=depth)},
            {"target_size": (self.width, self.height)},
        )
