"""Trails drawn (trails.py keeps their points): camera-facing ribbons for Add effects, streak footprints in the
sprite list for Alpha effects.

* Add: ``trail_ribbons.glsl`` rasterizes an instance a particle, a quad (6
  vertices) a segment, into the raster layer the resolve adds to the splat
  (render setting trail_draw RIBBONS; the default, SPLAT, adds the same
  segments by screen tiles: trail_tiles.py, with this module's constants).
* Alpha: ``trail_sprites.glsl`` writes each segment as a streak footprint
  (center, radius, depth, stretch) after the effect's sprites in the frame's
  sprite list, so segments are sorted, binned and blended with every sprite
  (sprites.py).

A trail runs from the particle's own position (at shutter close with motion
blur, the end of the splat's streak) through the ring's points, newest first:
segment s joins trail point s and s + 1.  Width (a multiple of the particle's
projected size) and tint vary with t = j / trail_points, 0 at the head and 1 at
the tail.
"""

from __future__ import annotations

from ..look.lighting import LOOK_FEATURES
from ..look.look import COLOR_END, COLOR_START, LOOK_RANDOM, LOOK_SEED, LOOK_TABLE, PARTICLE_STATE, particle_values
from ..look.sprite_sheets import SPRITE_FRAMES
from ..order.sorting import linear_groups
from ..order.tile_lists import FOOTPRINT_OUTPUTS
from ..seam.kernels import Constant, Feature, Image, Kernel, Raster, Sampler
from ..simulate.trails import TRAIL_LAYOUT
from .footprint import MOTION_BLUR, footprint_constants

QUAD_VERTICES = 6  # two triangles a segment

TRAIL_LOOK = Constant("VEC4", "trail_look", components=(
    ("trail_width", "x"),  # width at the head, times the particle's size
    ("trail_width_end", "y"),  # width at the tail, a fraction of the head's
    ("trail_fade", "z"),  # 1 - brightness at the tail
))
TRAIL_TINT = Constant("VEC4", "trail_tint", components=(("trail_color_end", "xyz"),))
TRAIL_CONSTANTS = (TRAIL_LAYOUT, TRAIL_LOOK, TRAIL_TINT)  # what trail_fetch.glsl reads
RING = (Sampler("trail_points"), Sampler("trail_heads"))  # what the drawing kernels read of trails.TrailBuffer
DRAW_CONSTANTS = (
    Constant("INT", "count"),
    Constant("MAT4", "view_proj"),
    COLOR_START,
    COLOR_END,
    Constant("VEC4", "trail_params", components=(
        ("pixel_scale", "x"),  # pixels per world unit at clip w = 1
        ("opacity", "y"),  # Alpha effects: opacity at the ribbon's middle
        ("target_extent", "zw"),  # the target's width and height in pixels
    )),
    Constant("VEC4", "state_origin"),
    LOOK_RANDOM,
    LOOK_SEED,
    *TRAIL_CONSTANTS,
)
TRAIL_INCLUDES = ("trail.glsl", "trail_fetch.glsl")
DRAW_INCLUDES = ("common.glsl", "random.glsl", "look.glsl", "particle_alive.glsl", "particle_look.glsl", "particle_fetch.glsl",
                 *TRAIL_INCLUDES)


RIBBONS = Raster("trail_ribbons", images=(LOOK_TABLE,), samplers=(*PARTICLE_STATE, *RING),
                 constants=DRAW_CONSTANTS, includes=DRAW_INCLUDES, features=(MOTION_BLUR, *LOOK_FEATURES),
                 varyings=(("VEC3", "v_color"), ("FLOAT", "v_across"), ("FLOAT", "v_half")))
# In a frame with textured sprites (``for_effect(settings, textured=True)``) the blend reads every entry's pose
# (sprite_sheets.SPRITE_FRAMES): the segments write theirs as none (the soft round sprite).
POSED_SEGMENTS = Feature(
    "posed", defines=(("SPRITE_TEXTURE", "1"),), images=(Image(SPRITE_FRAMES, "RGBA32F", "WRITE"),),
    wants=lambda settings, frame: frame["textured"], binds=lambda sprites: {SPRITE_FRAMES: sprites.frames},
    source="sprites")
TRAIL_SPRITES = Kernel(
    "trail_sprites",
    features=(POSED_SEGMENTS, *LOOK_FEATURES),
    images=(LOOK_TABLE, *FOOTPRINT_OUTPUTS, Image("sprite_keys", "R32UI", "WRITE")),
    samplers=(*PARTICLE_STATE, *RING),
    constants=(*DRAW_CONSTANTS, Constant("INT", "first_sprite")),  # where the effect's segments start in the list
    includes=(*DRAW_INCLUDES, "sprite_shape.glsl"),
)
RIBBON_KERNELS = (RIBBONS, TRAIL_SPRITES)


def trail_values(system, camera, kernel: Kernel) -> dict:
    """What every kernel that draws trails takes of them: the ring's layout, width and tint along it, and the
    shutter where ``kernel`` declares it."""
    s = system.settings
    declared = {c.name for c in kernel.constants}
    shutter = {name: value for name, value in footprint_constants(camera, disc=False).items() if name in declared}
    return {**shutter, "trail_layout": system.trails.layout_vector,
            "trail_look": (s.trail_width, s.trail_width_end, s.trail_fade, 0.0), "trail_tint": (*s.trail_color_end, 0.0)}


def draw_constants(system, camera, kernel: Kernel) -> dict:
    s = system.settings
    return {**trail_values(system, camera, kernel), "count": system.count, "view_proj": camera.view_proj,
            **particle_values(system), "trail_params": (camera.pixels_per_unit, s.opacity, camera.width, camera.height)}


def draw_ribbons(host, system, camera, target, depth, look) -> None:
    """Add each particle's trail to ``target`` (the raster layer): one instance a particle, a quad a segment."""
    kernel = RIBBONS.for_effect(system.settings, camera=camera)  # the head at shutter close with a shutter
    textures = {"pos_age": system.pos_age, "vel_life": system.vel_life, "look": look, **system.trails.textures,
                **kernel.bindings(system=system)}
    host.draw(kernel, "TRIS", QUAD_VERTICES * system.settings.trail_points, system.count, target, depth, textures,
              draw_constants(system, camera, kernel))



def sprite_entries(system) -> int:
    """Entries an Alpha effect takes in the frame's sprite list: a sprite a particle, and a segment of its trail."""
    trail = system.trails
    return system.count * (1 + (trail.settings.trail_points if trail is not None else 0))


def draw_sprites(host, system, camera, sprites, look, first: int, textured: bool = False) -> None:
    """An Alpha effect's trail segments as streak footprints at ``first`` on of the sprite list (sprites.SpriteList);
    ``textured``: the frame has textured sprites, the segments' poses written as none."""
    entries = system.count * system.settings.trail_points
    kernel = TRAIL_SPRITES.for_effect(system.settings, textured=textured)
    host.dispatch(
        kernel, linear_groups(entries),
        {"pos_age": system.pos_age, "vel_life": system.vel_life, "look": look, **system.trails.textures,
         "sprite_shapes": sprites.shapes, "sprite_streaks": sprites.streaks, "sprite_colors": sprites.colors,
         "sprite_keys": sprites.keys, **kernel.bindings(system=system, sprites=sprites)},
        {**draw_constants(system, camera, kernel), "first_sprite": first},
    )
