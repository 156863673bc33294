"""Screen-tile lists of footprints: (tile, item) instances in lists of a kept capacity, binned by tile.

Shared by the tile-binned compositors, the alpha sprites (``sprites.py``),
the bokeh discs (``bokeh.py``) and the additive quads (``quad_tiles.py``).
Each gives every item a footprint (``sprite_shape.glsl``: center, reach,
depth, stretch: a capsule) and writes how many 16x16 tiles it touches (the
tiles of its rectangle, row by row, the capsule reaches: ``sprite_row_tiles``);
then, reading like the algorithm::

    scan(tile counts -> every item's first instance, and the total)   # the total stays on the GPU
    sprite_instances(-> (tile, item), in list order)                   # into lists of a kept capacity
    binning by tile (stable)                                           # per-tile lists, in list order,
                                                                       # of the instances the total counts

and one workgroup per tile walks its list (or, with TileSlices, up to a
few dozen a long list, into partial sums added in order: the additive
trails, whose dense heads put a large share of all instances into a few
tiles).  The lists keep a capacity, so a
draw needs no read-back: every ``check_every`` draws the total is read, and a
draw whose instances did not fit gets lists with room for them before it
bins (the bake checks every draw; the viewport, which must not wait for the
GPU, every VIEWPORT_CHECK_EVERY draws, starting from its estimate).

``tile_kernel``'s walk (by measurement), layer format and slices (by memory) are shapes, so they stay parameters;
the scene's depth test, which the frame decides, is a feature (``DEPTH_TESTED``).
"""

from __future__ import annotations

from functools import cache

from ..primitives.binning import Binning
from ..primitives.scan import Scan, linear_size
from ..seam.kernels import Constant, Feature, Image, Kernel, Sampler, Shared
from ..seam.records import FOOTPRINT
from ..seam.tables import SIZES
from .sorting import linear_groups

TILE = SIZES["SPRITE_TILE"]
VIEWPORT_CHECK_EVERY = 30  # viewport draws between read-backs of the instance total
# The first read-back comes with the second draw (the first draw's total: its GPU work is done by then
# in a viewport), so lists sized from the estimate last one draw, not VIEWPORT_CHECK_EVERY (binning now
# runs over the instances; only the digit counts and their scans span the capacity).  Chosen by
# measurement: bench/results/nvidia-h100-80gb-hbm3-pcie-sse2-2026-11-24-viewport-timeline.json (749ac9f).
FIRST_CHECK = 2
MIN_INSTANCES = 1024
TILE_CHUNK = 256  # footprints a tile's workgroup holds in shared memory at once (tile_list.glsl)
TILE_PARTIALS = "tile_partials"  # the partial sums of long lists split over slices (TileSlices)
PARTIALS_MEMORY = 1 << 30  # bytes TileSlices' partial sums may take: 32 slices at 1080p, 8 at 4K
PARTIAL_BYTES = TILE * TILE * 16  # a tile's slice: 16x16 RGBA32F
# How a tile's pixels go through a chunk: ALL, every pixel tests every footprint; BLOCKS, the 32 pixels of
# each 8x4 block visit only the footprints whose capsule reaches the block (the same result;
# bench/sprite_bench.py times both for the sprites, bench/viewport_timeline.py the quads' QUAD_WALK).
WALKS = ("ALL", "BLOCKS")
# The alpha sprites' walk, chosen by measurement: bench/results/nvidia-h100-80gb-hbm3-pcie-sse2-2026-11-25-viewport-ab.json
# and ...-2026-11-25-sprites.json (blocks_nowait_ms against all_ and row_pairs_nowait_ms).
SPRITE_WALK = "BLOCKS"


# The alpha sprites' lists keep every sprite's whole rectangle (sprite_shape.glsl's sprite_row_tiles): their
# walk stops a pixel at the end of the chunk (TILE_CHUNK entries) that leaves it opaque, so which sprites share
# a chunk shows in the frame (by up to 1/4096 of what follows; a few pixels of the smoke presets' streaks), and
# leaving out the tiles a streak passes by would move the chunks' ends.
WHOLE_ROWS = ("WHOLE_ROWS", "1")


@cache
def tile_instances(depth_order: bool) -> Kernel:
    """(tile, item) instances of every item; ``depth_order``: items visited through ``depth_sprites``
    (the alpha sprites' nearest-first order, their WHOLE_ROWS), otherwise in list order (additive bokeh discs
    and quads)."""
    order = (Image("depth_sprites", "R32UI", "READ"),) if depth_order else ()
    return Kernel(
        "sprite_instances",
        images=(*order, Image("sprite_shapes", "RGBA32F", "READ"), Image("sprite_streaks", "RGBA32F", "READ"),
                Image("instance_offsets", "R32UI", "READ"),
                Image("instance_tiles", "R32UI", "WRITE"), Image("instance_sprites", "R32UI", "WRITE")),
        constants=(Constant("INT", "count"), Constant("IVEC2", "target_size"), Constant("INT", "capacity")),
        includes=("common.glsl", "sprite_shape.glsl"),
        defines=(("DEPTH_ORDER", "1"), WHOLE_ROWS) if depth_order else (),
    )


# A walk hiding what is behind the scene's depth (``for_effect(settings, depth=)``: the frame's depth image, or None).
DEPTH_TESTED = Feature("depth_test", defines=(("SPRITE_DEPTH_TEST", "1"),), samplers=(Sampler("scene_depth"),),
                       wants=lambda settings, frame: frame["depth"] is not None,
                       binds=lambda depth: {"scene_depth": depth}, source="depth")


def tile_kernel(name: str, layer: Image, shared: tuple = (), walk: str = "ALL", includes: tuple = (),
                slices: int = 1) -> Kernel:
    """A kernel that walks each tile's list (one workgroup per tile, ``tile_list.glsl``) into ``layer``; its
    feature DEPTH_TESTED: against the scene's depth; ``shared``: its own shared arrays besides the chunk;
    ``walk``: one of WALKS; ``includes``: its own after tile_list.glsl (tile_sum.glsl: the additive walk);
    ``slices`` > 1: long lists split over that many workgroups into partial sums (TileSlices; tile_sum.glsl
    only), the layer then not bound: tile_combine adds them to it."""
    blocks = walk == "BLOCKS"
    sliced = slices > 1
    return Kernel(
        name,
        images=(Image("binned_sprites", "R32UI", "READ"), Image("tile_counts", "R32UI", "READ"),
                Image("tile_offsets", "R32UI", "READ"), Image("sprite_shapes", "RGBA32F", "READ"),
                Image("sprite_streaks", "RGBA32F", "READ"), Image("sprite_colors", "RGBA32F", "READ"),
                Image(TILE_PARTIALS, "RGBA32F", "WRITE") if sliced else layer),
        constants=(Constant("IVEC2", "target_size"),),
        shared=(Shared("vec4", "s_shapes", TILE_CHUNK), Shared("vec4", "s_streaks", TILE_CHUNK),
                Shared("vec4", "s_colors", TILE_CHUNK), Shared("uint", "s_spans", TILE_CHUNK),
                *((Shared("uint", "s_blocks", TILE_CHUNK),
                   Shared("uint", "s_block_bits", TILE * TILE // 32 * TILE_CHUNK // 32)) if blocks else ()),
                *shared),
        local_size=(TILE, TILE, 1),
        includes=("common.glsl", "sprite_shape.glsl", "tile_list.glsl", *(("tile_slices.glsl",) if sliced else ()),
                  *includes),
        defines=(("TILE_CHUNK", str(TILE_CHUNK)), *((("BLOCK_WALK", "1"),) if blocks else ()),
                 *((("TILE_SLICES", str(slices)),) if sliced else ())),
        features=(DEPTH_TESTED,),
    )


@cache
def tile_combine(layer_format: str, slices: int) -> Kernel:
    """Adds the tiles' partial sums of up to ``slices`` slices to a ``layer_format`` layer (tile_combine.glsl)."""
    return Kernel(
        "tile_combine",
        images=(Image("tile_counts", "R32UI", "READ"), Image(TILE_PARTIALS, "RGBA32F", "READ"),
                Image("layer", layer_format)),
        constants=(Constant("IVEC2", "target_size"),),
        local_size=(TILE, TILE, 1),
        includes=("common.glsl", "tile_slices.glsl"),
        defines=(("TILE_CHUNK", str(TILE_CHUNK)), ("TILE_SLICES", str(slices))),
    )


def slices_within(host, tiles: int, wanted: int) -> int:
    """Up to ``wanted`` slices whose partial sums of ``tiles`` tiles fit PARTIALS_MEMORY and a texture; 1: none."""
    blocks = (host.max_texture_size // TILE) ** 2
    return max(1, min(wanted, PARTIALS_MEMORY // (tiles * PARTIAL_BYTES), blocks // tiles))


class TileSlices:
    """Partial sums of a tiles_x x tiles_y grid's tiles, each list summed by up to ``slices`` workgroups
    (tile_slices.glsl), and their addition to the layer: RGBA32F, a 16x16 block per tile and slice (33 MB a
    slice at 1080p; slices_within)."""

    def __init__(self, host, tiles_x: int, tiles_y: int, slices: int):
        self.host = host
        self.tiles_x, self.tiles_y, self.slices = tiles_x, tiles_y, slices
        blocks = tiles_x * tiles_y * slices
        per_row = min(blocks, host.max_texture_size // TILE)
        rows = -(-blocks // per_row)
        if rows * TILE > host.max_texture_size:
            raise ValueError(f"{tiles_x * TILE}x{tiles_y * TILE} pixels in {slices} slices need {rows * TILE} "
                             f"rows of partial sums, past the GPU's {host.max_texture_size}: fewer slices")
        self.partials = host.texture(TILE_PARTIALS, per_row * TILE, rows * TILE, "RGBA32F")

    def combine(self, counts, layer, target_size: tuple[int, int]) -> None:
        """Add the partial sums of the tiles with a list (``counts``) to ``layer``, in slice order."""
        self.host.dispatch(tile_combine(layer.format, self.slices), (self.tiles_x, self.tiles_y, 1),
                           {"tile_counts": counts, TILE_PARTIALS: self.partials, "layer": layer},
                           {"target_size": target_size})


# What the footprint kernels (sprite_footprint, bokeh_discs, ...) write into a FootprintList (store_footprint).
FOOTPRINT_OUTPUTS = tuple(Image(name, "RGBA32F", "WRITE") for name in FOOTPRINT.images)


class FootprintList:
    """Per-item scratch for up to ``capacity`` footprints: shape, streak, color, tile count and first instance."""

    def __init__(self, host, capacity: int):
        self.capacity = capacity
        size = linear_size(capacity, host.max_texture_size)
        self.shapes = host.texture("sprite_shapes", *size, "RGBA32F")
        self.streaks = host.texture("sprite_streaks", *size, "RGBA32F")
        self.colors = host.texture("sprite_colors", *size, "RGBA32F")
        self.instance_counts = host.texture("sprite_instance_counts", *size, "R32UI")
        self.instance_offsets = host.texture("sprite_instance_offsets", *size, "R32UI")
        self.scan = Scan(host, capacity)


class TileLists:
    """(tile, item) instances for up to ``capacity`` instances, and their binning by tile."""

    def __init__(self, host, capacity: int, tiles: int):
        self.capacity = capacity
        size = linear_size(capacity, host.max_texture_size)
        self.tiles = host.texture("sprite_instance_tiles", *size, "R32UI")
        self.sprites = host.texture("sprite_instance_sprites", *size, "R32UI")
        self.binning = Binning(host, capacity, tiles)


class KeptLists:
    """Tile lists of a width x height target, kept between draws and grown when a check finds them short.

    ``check_every``: draws between read-backs of the instance total (1: every
    draw, exact; more: a draw waits for nothing, and one whose instances
    outgrew the lists shows footprints cut at tile edges until the next check),
    the first on draw FIRST_CHECK.
    ``estimate``: instances an item is expected to have, for the first lists.
    """

    def __init__(self, host, width: int, height: int, check_every: int = 1, estimate: float = 1.0):
        self.host = host
        self.width, self.height = width, height
        self.tiles_x, self.tiles_y = -(-width // TILE), -(-height // TILE)
        self.total = host.texture("sprite_instance_total", 1, 1, "R32UI")  # the scan's total, written on the GPU
        self.check_every = check_every
        self.estimate = estimate
        self.draws = 0
        self.lists: TileLists | None = None

    def bin(self, items: dict, offsets, count: int, depth_order: bool) -> TileLists:
        """Instances of ``count`` items (``items``: their sprite_shapes, sprite_streaks and, with
        ``depth_order``, depth_sprites; ``offsets``: their scanned first instances, ``total`` written)
        binned by tile: the lists, which ``binning`` holds per tile."""
        self.draws += 1
        if self.lists is None:
            self._grow(int(self.estimate * count))
        if self.draws % self.check_every == 0 or self.draws == FIRST_CHECK:
            self._fit(int(self.host.read(self.total)[0, 0]))  # a wait: the bake's, or one in a while
        lists = self.lists
        self.host.dispatch(
            tile_instances(depth_order), linear_groups(count),
            {**items, "instance_offsets": offsets, "instance_tiles": lists.tiles, "instance_sprites": lists.sprites},
            {"count": count, "target_size": (self.width, self.height), "capacity": lists.capacity},
        )
        # Only the instances written (the total on the GPU, up to the capacity): nothing past it to mark.
        lists.binning.run(lists.tiles, lists.capacity, values=lists.sprites, limit=self.total)
        return lists

    def _grow(self, capacity: int) -> None:
        self.lists = TileLists(self.host, max(capacity, MIN_INSTANCES), self.tiles_x * self.tiles_y)

    def _fit(self, instances: int) -> None:
        """New lists of 5/4 what the frame needs when these are short, or more than 5/4 of that long
        (memory, and the digit counts the binning scans span the capacity)."""
        wanted = max(instances * 5 // 4, MIN_INSTANCES)
        if instances > self.lists.capacity or self.lists.capacity > wanted * 5 // 4:
            self._grow(wanted)
