"""Alpha-blended particles: soft sprites binned into screen tiles and composited front to back.

Beside the additive paths (``compositing.py``), effects in Alpha mode go
through one tile-binned compute compositor; every Alpha effect of a frame
shares one sprite list, so their sprites interleave by depth.  Reads like
the algorithm::

    sprite_footprint(state -> shapes, streaks, colors, keys)   # per effect, into the shared list
    radix sort (keys, sprite) nearest first                    # binning.DigitPasses, 2 passes (16-bit keys)
    sprite_tile_counts(depth order -> tiles per sprite)        # 16x16 tiles each footprint touches
    scan -> every sprite's first instance, and the total       # scan.py (the total stays on the GPU)
    sprite_instances(-> (tile, sprite) in depth order)         # into lists of a kept capacity
    binning by tile (stable)                                   # binning.Binning: per-tile lists, nearest first
    sprite_blend(one workgroup per tile, front to back)        # stops a pixel once it is opaque
    resolve(frame = sprites over the resolved frame)           # compositing.py's resolve, SPRITES_OVER

The order is exact per pixel: by view distance to 1/2048 of it (``sprite_shape.glsl``'s ``depth_key``: at
10 m sprites 5 mm apart still sort; an orthographic camera's window depth to 2^-16 of its clip range),
then by the sprite's place in the list for equal keys.  The instance lists keep a capacity and are checked every
``check_every`` draws (``tile_lists.KeptLists``; the viewport's first lists
are sized for ESTIMATED_TILES_PER_SPRITE).  A footprint is a general screen-space shape
(``sprite_shape.glsl``: center, radius, depth and a stretch vector), so a
motion-blurred streak (``shutter`` > 0) bins and blends like a round sprite; with the camera's depth of field
a sprite widens by its circle of confusion and fades by the area ratio (``footprint.DEPTH_OF_FIELD``).
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from typing import NamedTuple

from ..look.lighting import LOOK_FEATURES
from ..look.look import COLOR_END, COLOR_START, LOOK_RANDOM, LOOK_SEED, LOOK_TABLE, PARTICLE_STATE, particle_values
from ..look.sprite_sheets import (
    GRIDS,
    LIGHTS_FORMAT,
    NORMAL_SAMPLERS,
    POSED,
    REACH,
    REACHES,
    RELIEF,
    RELIEF_FOOTPRINT,
    SHEET_SAMPLERS,
    SPRITE_FRAMES,
    SPRITE_LIGHTS,
    has_relief,
    pose_values,
)
from ..order.sorting import linear_groups
from ..order.tile_lists import (
    DEPTH_TESTED,
    FOOTPRINT_OUTPUTS,
    SPRITE_WALK,
    TILE_CHUNK,
    WALKS,
    WHOLE_ROWS,
    FootprintList,
    KeptLists,
    tile_instances,
    tile_kernel,
)
from ..primitives.binning import DigitPasses
from ..primitives.scan import linear_size
from ..seam.kernels import Constant, Feature, Image, Kernel, Sampler, Shared
from . import ribbons
from .compositing import Camera
from .footprint import DEPTH_OF_FIELD, declared_footprint_constants
from .frame_resources import FrameResources
from .soft_particles import SOFT_DEPTH, soft_depth

ESTIMATED_TILES_PER_SPRITE = 4  # sprites of about 16 pixels across; the first lists' capacity
DEPTH_KEYS = 1 << 16  # sprite_shape.glsl's depth_key: two radix passes (HIDDEN_KEY the last)
_SPRITE_INCLUDES = ("common.glsl", "sprite_shape.glsl")
_LIST = (Image("sprite_shapes", "RGBA32F", "READ"), Image("sprite_streaks", "RGBA32F", "READ"))
_COUNT_SIZE = (Constant("INT", "count"), Constant("IVEC2", "target_size"))

SPRITE_FOOTPRINT = Kernel(
    "sprite_footprint",
    # Posed in a frame with textured sprites, writing their lights with relief (sprite_sheets.py), widened by the
    # camera's circle of confusion, then its look.
    features=(POSED, RELIEF_FOOTPRINT, DEPTH_OF_FIELD, *LOOK_FEATURES),
    images=(LOOK_TABLE, *FOOTPRINT_OUTPUTS, Image("sprite_keys", "R32UI", "WRITE")),
    samplers=PARTICLE_STATE,
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
    includes=("common.glsl", "random.glsl", "look.glsl", "particle_alive.glsl", "particle_look.glsl", "particle_fetch.glsl",
              "sprite_shape.glsl"),
)
SPRITE_TILE_COUNTS = Kernel(
    "sprite_tile_counts",
    images=(Image("depth_sprites", "R32UI", "READ"), *_LIST, Image("instance_counts", "R32UI", "WRITE")),
    constants=_COUNT_SIZE,
    includes=_SPRITE_INCLUDES,
    defines=(WHOLE_ROWS,),
)
# sprite_blend's features (a frame's: ``Kernel.for_effect(None, sheets=, relief=, soft_distance=)``).
# Sprites with a sheet sample it where SPRITE_FRAMES says they have one (sprite_sheets.SpriteSheets.blend_slots).
TEXTURED_BLEND = Feature(
    "textured", defines=(("SPRITE_TEXTURE", "1"),), images=(Image(SPRITE_FRAMES, "RGBA32F", "READ"),),
    samplers=SHEET_SAMPLERS, constants=(GRIDS, REACHES), includes=("flipbook.glsl",),
    shared=(Shared("vec4", "s_frames", TILE_CHUNK), Shared("vec4", "s_cells", TILE_CHUNK)),
    wants=lambda settings, frame: frame["sheets"] is not None,
    binds=lambda blend: {SPRITE_FRAMES: blend.sprites.frames, **blend.sheets[1]}, source="blend")
# Textured sprites shaded by SPRITE_LIGHTS and their sheet's normals; SPRITE_LIGHTS is read through a sampler
# (Blender binds at most 8 images a kernel).
RELIEF_BLEND = Feature(
    "relief", defines=(("SPRITE_RELIEF", "1"),), samplers=(Sampler(SPRITE_LIGHTS), *NORMAL_SAMPLERS),
    shared=(Shared("vec2", "s_lights", TILE_CHUNK),), requires=(TEXTURED_BLEND.name,),
    wants=lambda settings, frame: frame["relief"], binds=lambda blend: {SPRITE_LIGHTS: blend.sprites.lights},
    source="blend")
# Sprites fading into the scene's depth (soft_particles.py; the SPRITE_WALK blend with a depth test only).
SOFT_BLEND = Feature(
    "soft", defines=(("SOFT_PARTICLES", "1"),), constants=(SOFT_DEPTH,), includes=("soft_particles.glsl",),
    wants=lambda settings, frame: frame["soft_distance"] > 0.0, requires=(DEPTH_TESTED.name,))


class FootprintDraw(NamedTuple):
    """What an effect's sprite_footprint features bind from (Kernel.bindings): the frame's list, the effect."""

    sprites: SpriteList
    system: object
    resources: FrameResources

    @property
    def light_direction(self):
        """Where the effect's lights come from; a blank image for an effect without relief of its own in a frame
        with relief."""
        return self.system.particle_light_direction if has_relief(self.system.settings) else self.resources.sheets.blank


class BlendDraw(NamedTuple):
    """What a frame's sprite_blend draws from: its features' bindings come from it (Kernel.bindings)."""

    sprites: SpriteList
    sheets: tuple | None  # SpriteSheets.blend_slots'


@cache
def sprite_blend(walk: str = SPRITE_WALK) -> Kernel:
    """The per-tile front-to-back blend; ``walk``: tile_lists.WALKS.  Its features: DEPTH_TESTED (against the
    scene's depth), TEXTURED_BLEND, RELIEF_BLEND, and SOFT_BLEND where it tests the depth on the SPRITE_WALK."""
    kernel = tile_kernel("sprite_blend", Image("layer", "RGBA32F", "WRITE"), (Shared("uint", "s_open", 1),), walk)
    soft = (SOFT_BLEND,) if walk == SPRITE_WALK else ()
    return replace(kernel, features=(*kernel.features, TEXTURED_BLEND, RELIEF_BLEND, *soft))


SPRITE_KERNELS = (SPRITE_FOOTPRINT, SPRITE_TILE_COUNTS, tile_instances(True), *(sprite_blend(walk) for walk in WALKS))


class SpriteList(FootprintList):
    """Per-sprite scratch for up to ``capacity`` sprites: footprints, depth keys, the depth order."""

    def __init__(self, host, capacity: int):
        super().__init__(host, capacity)
        size = linear_size(capacity, host.max_texture_size)
        self.keys = host.texture("sprite_keys", *size, "R32UI")
        self.depth_keys = host.texture("sprite_depth_keys", *size, "R32UI")
        self.depth_sprites = host.texture("sprite_depth_order", *size, "R32UI")
        self.frames = host.texture(SPRITE_FRAMES, *size, "RGBA32F")  # textured sprites' poses (sprite_sheets.py)
        self.sort = DigitPasses(host, capacity, DEPTH_KEYS)
        self._host, self._size, self._lights = host, size, None

    @property
    def lights(self):
        """Textured sprites' lights in their frames (sprite_sheets.SPRITE_LIGHTS), made when relief first asks."""
        if self._lights is None:
            self._lights = self._host.texture(SPRITE_LIGHTS, *self._size, LIGHTS_FORMAT)
        return self._lights


class SpriteLayer:
    """The alpha-blended layer of a frame: a float target the size of the frame's.

    ``check_every``: draws between read-backs of the instance total (``tile_lists.KeptLists``); ``walk``:
    how the blend goes through a tile's sprites (``tile_lists.WALKS``).
    """

    def __init__(self, host, width: int, height: int, check_every: int = 1, walk: str = SPRITE_WALK):
        self.host = host
        self.walk = walk
        self.width, self.height = width, height
        self.target = host.texture("sprites", width, height, "RGBA32F")
        self.kept = KeptLists(host, width, height, check_every, ESTIMATED_TILES_PER_SPRITE)
        self.list = None  # grown to the frame's sprite count

    def draw(self, systems, resources: FrameResources, camera: Camera, indices=None, shutter: float = 0.0,
             soft_distance: float = 0.0) -> None:
        """Composite every system's sprites, nearest first per pixel, into ``target``.

        ``indices`` (the sorted drawing orders of the rasterized path) are not
        needed: the order is exact per pixel.  ``shutter`` > 0 sweeps each
        sprite along its screen motion over that many seconds (motion blur).
        ``soft_distance`` > 0 fades sprites where they near the scene depth (soft_particles.py).
        """
        count = sum(ribbons.sprite_entries(system) for system in systems)
        if count == 0:
            self.host.clear(self.target)
            return
        if self.list is None or self.list.capacity < count:
            self.list = SpriteList(self.host, count)
        sprites = self.list
        sheets = resources.sheets.blend_slots([system.settings for system in systems])
        slots = sheets[0] if sheets is not None else [None] * len(systems)
        reaches = sheets[2][REACHES.name][:, 0] if sheets is not None else None  # each slot's, from blend_slots
        relief = any(has_relief(system.settings) for system in systems)
        first = 0
        for system, slot in zip(systems, slots):
            reach = float(reaches[slot]) if slot is not None and slot >= 0 else 0.0
            self._footprints(system, resources, camera, first, shutter, slot, reach, relief)
            if system.trails is not None:
                ribbons.draw_sprites(self.host, system, camera, sprites, resources.look_texture(system),
                                     first + system.count, sheets is not None)
            first += ribbons.sprite_entries(system)
        sprites.sort.run(sprites.keys, None, sprites.depth_keys, sprites.depth_sprites, count)
        items = {"depth_sprites": sprites.depth_sprites, "sprite_shapes": sprites.shapes,
                 "sprite_streaks": sprites.streaks}
        self.host.dispatch(SPRITE_TILE_COUNTS, linear_groups(count),
                           {**items, "instance_counts": sprites.instance_counts},
                           {"count": count, "target_size": (self.width, self.height)})
        sprites.scan.run(sprites.instance_counts, sprites.instance_offsets, count, total=self.kept.total)
        binned = self.kept.bin(items, sprites.instance_offsets, count, depth_order=True).binning
        depth = resources.depth_image
        kernel = sprite_blend(self.walk).for_effect(None, depth=depth, sheets=sheets, relief=relief,
                                                    soft_distance=soft_distance)
        grids = sheets[2] if sheets else {}
        if SOFT_BLEND.name in kernel.chosen:
            grids = {**grids, "soft_depth": soft_depth(camera.view_proj, soft_distance)}
        self.host.dispatch(
            kernel, (self.kept.tiles_x, self.kept.tiles_y, 1),
            {"binned_sprites": binned.items, "tile_counts": binned.counts, "tile_offsets": binned.offsets,
             "sprite_shapes": sprites.shapes, "sprite_streaks": sprites.streaks, "sprite_colors": sprites.colors,
             "layer": self.target, **kernel.bindings(depth=depth, blend=BlendDraw(sprites, sheets))},
            {"target_size": (self.width, self.height), **grids},
        )

    def _footprints(self, system, resources: FrameResources, camera: Camera, first: int, shutter: float,
                    sheet_slot: int | None, reach: float = 0.0, relief: bool = False) -> None:
        """One effect's footprints; ``sheet_slot`` (a frame with textured sprites: -1 for none) posed too, its
        footprint reaching ``reach`` (sprite_sheets.REACH) of its square; ``relief`` (a frame with relief): its
        sprites' lights written too (none without relief of its own)."""
        s = system.settings
        sprites = self.list
        kernel = SPRITE_FOOTPRINT.for_effect(s, camera=camera, sheet_slot=sheet_slot, relief=relief)
        relief_values = ({RELIEF.name: s.sprite_relief if has_relief(s) else 0.0}
                         if RELIEF_FOOTPRINT.name in kernel.chosen else {})
        self.host.dispatch(
            kernel, linear_groups(system.count),
            {"pos_age": system.pos_age, "vel_life": system.vel_life, "look": resources.look_texture(system),
             "sprite_shapes": sprites.shapes, "sprite_streaks": sprites.streaks, "sprite_colors": sprites.colors,
             "sprite_keys": sprites.keys,
             **kernel.bindings(system=system, footprints=FootprintDraw(sprites, system, resources))},
            {
                "count": system.count,
                "first_sprite": first,
                "view_proj": camera.view_proj,
                **particle_values(system),
                "sprite_params": (camera.pixels_per_unit, s.opacity, camera.width, camera.height),
                "sweep_seconds": shutter,
                **declared_footprint_constants(camera, kernel),
                **(pose_values(s, sheet_slot) if sheet_slot is not None else {}),
                **({REACH.name: reach} if sheet_slot is not None else {}),
                **relief_values,
            },
        )

    def read(self):
        return self.host.read(self.target)
