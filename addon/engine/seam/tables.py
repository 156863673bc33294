"""Integer tables shared by Python and GLSL, written down once.

Every kernel receives each entry as a ``#define`` (``Kernel.all_defines``):
``EMITTER_SHAPES["SPHERE"]`` in Python is ``SHAPE_SPHERE`` in GLSL, and
``RANDOM_STREAMS["LIFETIME"]`` is ``STREAM_LIFETIME`` (``2u``-style: streams
are uints).  GLSL files and the numpy reference name these instead of writing
the numbers out; a test (tests/test_seam.py) fails on a number a table names.
The layouts of records in texels are records.py's.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Table:
    """Named integers, emitted as ``#define PREFIX_KEY value`` (``suffix`` 'u': unsigned)."""

    prefix: str
    values: tuple[tuple[str, int], ...]
    suffix: str = ""

    def __getitem__(self, key: str) -> int:
        return dict(self.values)[key]

    def __contains__(self, key: str) -> bool:
        return key in dict(self.values)

    def key_of(self, value: int) -> str:
        return next(key for key, v in self.values if v == value)

    def glsl_name(self, key: str) -> str:
        return f"{self.prefix}_{key}" if self.prefix else key

    def defines(self) -> tuple[tuple[str, str], ...]:
        return tuple((self.glsl_name(key), f"{value}{self.suffix}") for key, value in self.values)


# Emitter shapes (simulate.glsl emit()).
EMITTER_SHAPES = Table("SHAPE", (("POINT", 0), ("SPHERE", 1), ("BOX", 2), ("MESH", 3)))
# Force field types: the kind of a force field record (records.FORCE_FIELD).
FIELD_TYPES = Table("FIELD", (("WIND", 1), ("VORTEX", 2), ("FORCE", 3), ("TURBULENCE", 4)))
# Collider types: the kind of a collider record (records.COLLIDER).
COLLIDER_TYPES = Table("COLLIDER", (("PLANE", 1), ("SPHERE", 2), ("BOX", 3), ("SDF", 4)))
# Sizes of the record layouts (records.py) and images.
SIZES = Table("", (
    ("FIELD_TEXELS", 3),  # texels per force field row (records.FORCE_FIELD)
    ("COLLIDER_ROWS", 16),  # uniform rows per collider (records.COLLIDER)
    ("MAX_COLLIDERS", 16),  # colliders acting on one effect (the simulate kernel's uniform rows)
    ("TRIANGLE_TEXELS", 4),  # texels per emitter triangle (records.TRIANGLE)
    ("TRIANGLE_ROW", 4096),  # texels per row of the triangle image (1024 triangles)
    ("CSG_SHAPE_COUNT", 2),  # CSG primitive codes: shape + CSG_SHAPE_COUNT * mode
    ("SPRITE_TILE", 16),  # pixels a side of the tiles the sprite and bokeh lists bin into (tile_lists.py)
    ("MAX_SEGMENT_PIXELS", 16384),  # a trail segment whose box is larger (sweeping past the lens) is left out
    ("SPRITE_SHEETS", 4),  # textured Alpha effects one frame's sprite blend samples (sprite_sheets.py)
    ("GRID_CELLS", 256),  # cells per axis before the sort key's grid wraps: 8 bits each, 24-bit keys
    ("LIGHT_ROWS", 4),  # uniform rows per light (records.LIGHT)
))
# The largest integer color each channel of the R21G22B21 accumulation holds (color_pack.glsl).
CHANNEL_MAX = Table("CHANNEL_MAX", (("R", (1 << 21) - 1), ("G", (1 << 22) - 1), ("B", (1 << 21) - 1)), suffix="u")
# Sort key modes (sorting.SortKey, the sort key include).
SORT_KEY_MODES = Table("KEY", (("DEPTH", 0), ("GRID", 1)))
# Random streams: random_unit(index, step, seed * STREAMS_PER_SEED + stream) gives every use its
# own independent numbers (random.glsl); the numpy reference draws from the same streams.
RANDOM_STREAMS = Table("STREAM", (
    ("NORMAL_U", 0),  # emission: random direction (point and sphere shapes), first uniform
    ("NORMAL_V", 1),  # ... second uniform
    ("SHAPE_U", 2),  # sphere radius, box x, mesh triangle pick
    ("JITTER_U", 3),  # random velocity direction, first uniform
    ("JITTER_V", 4),  # ... second uniform
    ("JITTER_SPEED", 5),  # random velocity magnitude
    ("LIFETIME", 6),  # lifetime variation
    ("SHAPE_V", 7),  # box y, mesh barycentric r
    ("SHAPE_W", 8),  # box z, mesh barycentric s
    ("CONE_U", 9),  # direction inside the velocity cone, first uniform
    ("CONE_V", 10),  # ... second uniform
    ("BRIGHTNESS", 11),  # look: brightness variation
    ("SIZE", 12),  # look: size variation
    ("PERMEABILITY", 13),  # collisions: does the particle pass through (per particle and collider)
    ("SPRITE", 14),  # textured sprites: the step is what is drawn (SPRITE_DRAWS)
    ("SPAWN_COUNT", 15),  # sub-emitters: how many a parent's event spawns (per parent particle, the child's seed)
    ("PER_SEED", 16),  # streams one seed owns: a seed's streams start at seed * STREAM_PER_SEED
), suffix="u")
# What a textured sprite draws from STREAM_SPRITE, as the step (sprite_texture.glsl, reference/look/sprite_sheets.py;
# the axis a point cache's particle turns about with that angle: output/export.py).
SPRITE_DRAWS = Table("SPRITE_DRAW", (("ANGLE", 0), ("SPIN", 1), ("FRAME", 2),
                                     ("AXIS_U", 3), ("AXIS_V", 4)), suffix="u")  # AXIS: point caches' tumble axis
# Flipbook frame blending (settings' flipbook_blend; sprite_texture.glsl).
FLIPBOOK_BLENDS = Table("FLIPBOOK", (("NONE", 0), ("FRAMES", 1), ("MOTION_VECTORS", 2)))
# The CSG samplers' streams (csg_generate.glsl, reference/simulate/csg.py): a seed's start at seed * CSG_STREAM_PER_SEED.
CSG_STREAMS = Table("CSG_STREAM", (
    ("U", 0),  # point on the surface, first uniform
    ("V", 1),  # ... second uniform
    ("PICK", 2),  # box: which face pair
    ("SIDE", 3),  # box: which side of it
    ("PER_SEED", 4),
    ("GLITTER", 7),  # csg_points: phase of the animated noise (step: the primitive, no seed)
), suffix="u")
# CSG primitives: a primitive record's code is shape + CSG_SHAPE_COUNT * mode (records.CSG_PRIMITIVE).
CSG_SHAPES = Table("CSG_SHAPE", (("SPHERE", 0), ("BOX", 1)))
CSG_MODES = Table("CSG_MODE", (("ADD", 0), ("SUBTRACT", 1)))
# Light kinds: the kind of a light record (records.LIGHT); an area light is a rectangle (square, rectangle) or a
# disc (disk, ellipse), lighting.py says how each is approximated.
LIGHT_TYPES = Table("LIGHT_TYPE", (("SUN", 0), ("POINT", 1), ("SPOT", 2), ("AREA_RECTANGLE", 3), ("AREA_DISC", 4)))
# What gives a spawned effect its births (settings.spawn_on; the spawn kernels #define them: events.py).
SPAWN_EVENTS = Table("SPAWN_ON", (("DEATH", 0), ("COLLISION", 1), ("RATE", 2)))
# Bits of the simulate kernel's ``flags``.
SIMULATE_FLAGS = Table("FLAG", (("RESPAWN", 1),))

TABLES = (EMITTER_SHAPES, FIELD_TYPES, COLLIDER_TYPES, SIZES, CHANNEL_MAX, SORT_KEY_MODES, RANDOM_STREAMS,
          CSG_STREAMS, CSG_SHAPES, CSG_MODES, SIMULATE_FLAGS, LIGHT_TYPES, SPRITE_DRAWS, FLIPBOOK_BLENDS)
TABLE_DEFINES = tuple(define for table in TABLES for define in table.defines())
