"""Alpha-blended particles: soft sprites binned into screen tiles and composited front to back.

Beside the additive paths (``compositing.py``), effects in Alpha mode go
through one tile-binned compute compositor; every Alpha effect of a frame
shares one sprite list, so their sprites interleave by depth.  Reads like
the algorithm::

    sprite_footprint(state -> shapes, streaks, colors, keys)   # per effect, into the shared list
    radix sort (keys, sprite) nearest first                    # binning.DigitPasses, 4 passes
    sprite_tile_counts(depth order -> tiles per sprite)        # 16x16 tiles each footprint touches
    scan -> every sprite's first instance, and the total       # scan.py (the total stays on the GPU)
    sprite_instances(-> (tile, sprite) in depth order)         # into lists of a kept capacity
    binning by tile (stable)                                   # binning.Binning: per-tile lists, nearest first
    sprite_blend(one workgroup per tile, front to back)        # stops a pixel once it is opaque
    alpha_over(frame = sprites over frame)

The order is exact per pixel (depth, then the sprite's place in the list for
equal depths).  The instance lists keep a capacity, so a draw needs no
read-back: ``check_every`` draws the total is read, and a frame whose
instances did not fit is drawn again with room for them (the bake checks
every frame; the viewport, which must not wait for the GPU, every
VIEWPORT_CHECK_EVERY draws, starting from ESTIMATED_TILES_PER_SPRITE).  A footprint is a general screen-space shape
(``sprite_shape.glsl``: center, radius, depth and a stretch vector), so a
motion-blurred streak (``shutter`` > 0) bins and blends like a round sprite.
"""

from __future__ import annotations

from functools import cache

from .binning import ALL_KEYS, Binning, DigitPasses
from .compositing import Camera, Compositor
from .kernels import Constant, Image, Kernel, Sampler, Shared
from .look import COLOR_END, COLOR_START, LOOK_RANDOM, LOOK_SEED
from .scan import Scan, linear_size

TILE = 16
ESTIMATED_TILES_PER_SPRITE = 4  # sprites of about 16 pixels across; the first lists' capacity
VIEWPORT_CHECK_EVERY = 30  # viewport draws between read-backs of the instance total
MIN_INSTANCES = 1024
_SPRITE_INCLUDES = ("common.glsl", "sprite_shape.glsl")
_LIST = (Image("sprite_shapes", "RGBA32F", "READ"), Image("sprite_streaks", "RGBA32F", "READ"))
_COUNT_SIZE = (Constant("INT", "count"), Constant("IVEC2", "target_size"))

SPRITE_FOOTPRINT = Kernel(
    "sprite_footprint",
    images=(Image("look", "RGBA32F", "READ"), Image("sprite_shapes", "RGBA32F", "WRITE"),
            Image("sprite_streaks", "RGBA32F", "WRITE"), Image("sprite_colors", "RGBA32F", "WRITE"),
            Image("sprite_keys", "R32UI", "WRITE")),
    samplers=(Sampler("pos_age"), Sampler("vel_life")),
    constants=(
        Constant("INT", "count"),
        Constant("INT", "first_sprite"),  # where this effect's sprites start in the frame's list
        Constant("MAT4", "view_proj"),
        COLOR_START,
        COLOR_END,
        Constant("VEC4", "sprite_params", components=(
            ("pixel_scale", "x"),  # pixels per world unit at clip w = 1
            ("opacity", "y"),
            ("target_extent", "zw"),  # the target's width and height in pixels
        )),
        Constant("VEC4", "state_origin"),  # xyz: what stored positions are relative to (simulation.py)
        LOOK_RANDOM,
        LOOK_SEED,
        Constant("FLOAT", "sweep_seconds"),  # seconds of motion a sprite is swept along (0: round sprites)
    ),
    includes=("common.glsl", "random.glsl", "look.glsl", "particle_look.glsl", "particle_fetch.glsl",
              "sprite_shape.glsl"),
)
SPRITE_TILE_COUNTS = Kernel(
    "sprite_tile_counts",
    images=(Image("depth_sprites", "R32UI", "READ"), *_LIST, Image("instance_counts", "R32UI", "WRITE")),
    constants=_COUNT_SIZE,
    includes=_SPRITE_INCLUDES,
)
SPRITE_INSTANCES = Kernel(
    "sprite_instances",
    images=(Image("depth_sprites", "R32UI", "READ"), *_LIST, Image("instance_offsets", "R32UI", "READ"),
            Image("instance_total", "R32UI", "READ"),
            Image("instance_tiles", "R32UI", "WRITE"), Image("instance_sprites", "R32UI", "WRITE")),
    constants=(*_COUNT_SIZE, Constant("INT", "capacity")),
    includes=_SPRITE_INCLUDES,
)


@cache
def sprite_blend(depth_test: bool) -> Kernel:
    """The per-tile front-to-back blend; ``depth_test``: against the scene's depth."""
    return Kernel(
        "sprite_blend",
        images=(Image("binned_sprites", "R32UI", "READ"), Image("tile_counts", "R32UI", "READ"),
                Image("tile_offsets", "R32UI", "READ"), *_LIST, Image("sprite_colors", "RGBA32F", "READ"),
                Image("layer", "RGBA32F", "WRITE")),
        samplers=(Sampler("scene_depth"),) if depth_test else (),
        constants=(Constant("IVEC2", "target_size"),),
        shared=(Shared("vec4", "s_shapes", 256), Shared("vec2", "s_streaks", 256), Shared("vec4", "s_colors", 256),
                Shared("uint", "s_spans", 256), Shared("uint", "s_open", 1)),
        local_size=(TILE, TILE, 1),
        includes=_SPRITE_INCLUDES,
        defines=(("SPRITE_DEPTH_TEST", "1"),) if depth_test else (),
    )


ALPHA_OVER = Kernel(
    "alpha_over",
    images=(Image("frame", "RGBA32F"),),
    samplers=(Sampler("sprites"),),
    constants=(Constant("IVEC2", "target_size"),),
    local_size=(16, 16, 1),
    includes=(),
)
SPRITE_KERNELS = (SPRITE_FOOTPRINT, SPRITE_TILE_COUNTS, SPRITE_INSTANCES, sprite_blend(False), sprite_blend(True),
                  ALPHA_OVER)


def linear_groups(count: int) -> tuple[int, int, int]:
    """One 256-thread workgroup per 256 items, in a 2D grid (``sprite_linear_index``)."""
    groups = max(1, -(-count // 256))
    x = min(groups, 32768)
    return (x, -(-groups // x), 1)


class SpriteList:
    """Per-sprite scratch for up to ``capacity`` sprites: footprints, depth keys, the depth order."""

    def __init__(self, host, capacity: int):
        self.capacity = capacity
        size = linear_size(capacity, host.max_texture_size)
        self.shapes = host.texture("sprite_shapes", *size, "RGBA32F")
        self.streaks = host.texture("sprite_streaks", *size, "RGBA32F")
        self.colors = host.texture("sprite_colors", *size, "RGBA32F")
        self.keys = host.texture("sprite_keys", *size, "R32UI")
        self.depth_keys = host.texture("sprite_depth_keys", *size, "R32UI")
        self.depth_sprites = host.texture("sprite_depth_order", *size, "R32UI")
        self.instance_counts = host.texture("sprite_instance_counts", *size, "R32UI")
        self.instance_offsets = host.texture("sprite_instance_offsets", *size, "R32UI")
        self.sort = DigitPasses(host, capacity, ALL_KEYS)
        self.scan = Scan(host, capacity)


class TileLists:
    """(tile, sprite) instances for up to ``capacity`` instances, and their binning by tile."""

    def __init__(self, host, capacity: int, tiles: int):
        self.capacity = capacity
        size = linear_size(capacity, host.max_texture_size)
        self.tiles = host.texture("sprite_instance_tiles", *size, "R32UI")
        self.sprites = host.texture("sprite_instance_sprites", *size, "R32UI")
        self.binning = Binning(host, capacity, tiles)


class SpriteLayer:
    """The alpha-blended layer of a frame: a float target the size of the compositor's.

    ``check_every``: draws between read-backs of the instance total (1: every
    draw, exact; more: a draw waits for nothing, and a frame whose instances
    outgrew the lists shows sprites cut at tile edges until the next check).
    """

    def __init__(self, host, width: int, height: int, check_every: int = 1):
        self.host = host
        self.width, self.height = width, height
        self.tiles_x, self.tiles_y = -(-width // TILE), -(-height // TILE)
        self.target = host.texture("sprites", width, height, "RGBA32F")
        self.total = host.texture("sprite_instance_total", 1, 1, "R32UI")
        self.check_every = check_every
        self.draws = 0
        self.list = None  # grown to the frame's sprite count
        self.lists = None  # instance lists: grown when a check finds them short

    def draw(self, systems, compositor: Compositor, camera: Camera, indices=None, shutter: float = 0.0) -> None:
        """Composite every system's sprites, nearest first per pixel, into ``target``.

        ``indices`` (the sorted drawing orders of the rasterized path) are not
        needed: the order is exact per pixel.  ``shutter`` > 0 sweeps each
        sprite along its screen motion over that many seconds (motion blur).
        """
        count = sum(system.count for system in systems)
        if count == 0:
            self.host.clear(self.target)
            return
        if self.list is None or self.list.capacity < count:
            self.list = SpriteList(self.host, count)
        sprites = self.list
        first = 0
        for system in systems:
            self._footprints(system, compositor, camera, first, shutter)
            first += system.count
        sprites.sort.run(sprites.keys, None, sprites.depth_keys, sprites.depth_sprites, count)
        lists = {"depth_sprites": sprites.depth_sprites, "sprite_shapes": sprites.shapes,
                 "sprite_streaks": sprites.streaks}
        size = {"count": count, "target_size": (self.width, self.height)}
        self.host.dispatch(SPRITE_TILE_COUNTS, linear_groups(count),
                           {**lists, "instance_counts": sprites.instance_counts}, size)
        sprites.scan.run(sprites.instance_counts, sprites.instance_offsets, count, total=self.total)
        self.draws += 1
        if self.lists is None:
            self._grow(ESTIMATED_TILES_PER_SPRITE * count)
        if self.draws % self.check_every == 0:
            instances = int(self.host.read(self.total)[0, 0])  # a wait: the bake's, or one in a while
            self._fit(instances)
        self._bin_and_blend(sprites, lists, size, compositor)

    def _grow(self, capacity: int) -> None:
        self.lists = TileLists(self.host, max(capacity, MIN_INSTANCES), self.tiles_x * self.tiles_y)

    def _fit(self, instances: int) -> None:
        """New lists of 5/4 what the frame needs when these are short, or more than 5/4 of that long
        (binning runs over the whole capacity: on an H100 the 4-per-sprite first guess made the tile
        binning of 1M smoke sprites 69% longer than its 2.5 instances a sprite needed)."""
        wanted = max(instances * 5 // 4, MIN_INSTANCES)
        if instances > self.lists.capacity or self.lists.capacity > wanted * 5 // 4:
            self._grow(wanted)

    def _bin_and_blend(self, sprites, lists, size, compositor: Compositor) -> None:
        tiles = self.lists
        self.host.dispatch(SPRITE_INSTANCES, linear_groups(max(size["count"], tiles.capacity)),
                           {**lists, "instance_offsets": sprites.instance_offsets, "instance_total": self.total,
                            "instance_tiles": tiles.tiles, "instance_sprites": tiles.sprites},
                           {**size, "capacity": tiles.capacity})
        tiles.binning.run(tiles.tiles, tiles.capacity, values=tiles.sprites)
        depth = compositor.depth.depth if compositor.depth else None
        self.host.dispatch(
            sprite_blend(depth is not None), (self.tiles_x, self.tiles_y, 1),
            {"binned_sprites": tiles.binning.items, "tile_counts": tiles.binning.counts,
             "tile_offsets": tiles.binning.offsets, "sprite_shapes": sprites.shapes,
             "sprite_streaks": sprites.streaks, "sprite_colors": sprites.colors, "layer": self.target,
             **({"scene_depth": depth} if depth is not None else {})},
            {"target_size": (self.width, self.height)},
        )

    def _footprints(self, system, compositor: Compositor, camera: Camera, first: int, shutter: float) -> None:
        s = system.settings
        sprites = self.list
        self.host.dispatch(
            SPRITE_FOOTPRINT, linear_groups(system.count),
            {"pos_age": system.pos_age, "vel_life": system.vel_life, "look": compositor.look_texture(system),
             "sprite_shapes": sprites.shapes, "sprite_streaks": sprites.streaks, "sprite_colors": sprites.colors,
             "sprite_keys": sprites.keys},
            {
                "count": system.count,
                "first_sprite": first,
                "view_proj": camera.view_proj,
                "color_start": (*s.color_start, s.emission_strength),
                "color_end": (*s.color_end, s.size),
                "sprite_params": (camera.pixels_per_unit, s.opacity, camera.width, camera.height),
                "state_origin": (*system.origin, 0.0),
                "look_random": (s.color_random, s.size_random, 0.0, 0.0),
                "look_seed": s.seed,
                "sweep_seconds": shutter,
            },
        )

    def over(self, compositor: Compositor) -> None:
        """frame = sprites over frame (premultiplied)."""
        self.host.dispatch(
            ALPHA_OVER, ALPHA_OVER.groups_for(self.width, self.height),
            {"frame": compositor.frame, "sprites": self.target},
            {"target_size": (self.width, self.height)},
        )

    def read(self):
        return self.host.read(self.target)
