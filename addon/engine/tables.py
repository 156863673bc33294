"""Integer tables shared by Python and GLSL, written down once.

Every kernel receives each entry as a ``#define`` (``Kernel.all_defines``):
``EMITTER_SHAPES["SPHERE"]`` in Python is ``SHAPE_SPHERE`` in GLSL, and
``RANDOM_STREAMS["LIFETIME"]`` is ``STREAM_LIFETIME`` (``2u``-style: streams
are uints).  GLSL files name these instead of writing the numbers out; a test
(tests/test_kernels.py) fails on a number or row index a table names.
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
# Force field types: texel 0 x of a field row (effectors.pack_force_fields).
FIELD_TYPES = Table("FIELD", (("WIND", 1), ("VORTEX", 2), ("FORCE", 3), ("TURBULENCE", 4)))
# Collider types: row 0 x of a collider's uniform rows (effectors.collider_rows).
COLLIDER_TYPES = Table("COLLIDER", (("PLANE", 1), ("SPHERE", 2), ("BOX", 3)))
# The uniform rows of one collider (effectors.collider_rows): the first row of each part.
COLLIDER_ROW = Table("COLLIDER_ROW", (
    ("HEAD", 0),  # (type, bounce, friction, 0)
    ("HALF_SIZE", 1),  # xyz
    ("TO_LOCAL", 2),  # 3 rows: world to centered local at the step's end
    ("START_Z", 5),  # the z row of that at the step's start
    ("TO_WORLD", 6),  # 3 rows: centered local to world at the step's end
    ("SURFACE_VELOCITY", 9),  # 3 rows: velocity per centered local point
))
# The texels of one force field row (effectors.pack_force_fields).
FIELD_TEXEL = Table("FIELD_TEXEL", (
    ("HEAD", 0),  # (type, strength, falloff power, max distance)
    ("PLACE", 1),  # (position, size)
    ("AXIS", 2),  # (unit axis, 0)
))
# The texels of one emitter triangle (effectors.pack_triangles).
TRIANGLE_TEXEL = Table("TRIANGLE_TEXEL", (
    ("V0", 0),  # (v0, cumulative area fraction)
    ("V1", 1),
    ("V2", 2),
    ("NORMAL", 3),
))
# Sizes of the layouts above.
SIZES = Table("", (
    ("FIELD_TEXELS", 3),  # texels per force field row
    ("COLLIDER_ROWS", 12),  # uniform rows per collider
    ("TRIANGLE_TEXELS", 4),  # texels per emitter triangle
    ("TRIANGLE_ROW", 4096),  # texels per row of the triangle image (1024 triangles)
    ("CSG_SHAPE_COUNT", 2),  # CSG primitive codes: shape + CSG_SHAPE_COUNT * mode
))
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
    ("PER_SEED", 16),  # streams one seed owns: a seed's streams start at seed * STREAM_PER_SEED
), suffix="u")
# The CSG samplers' streams (csg_generate.glsl, reference/csg.py): a seed's start at seed * CSG_STREAM_PER_SEED.
CSG_STREAMS = Table("CSG_STREAM", (
    ("U", 0),  # point on the surface, first uniform
    ("V", 1),  # ... second uniform
    ("PICK", 2),  # box: which face pair
    ("SIDE", 3),  # box: which side of it
    ("PER_SEED", 4),
    ("GLITTER", 7),  # csg_points: phase of the animated noise (step: the primitive, no seed)
), suffix="u")
# CSG primitives: row 0 w of the primitives image is shape + CSG_SHAPE_COUNT * mode (csg.py).
CSG_SHAPES = Table("CSG_SHAPE", (("SPHERE", 0), ("BOX", 1)))
CSG_MODES = Table("CSG_MODE", (("ADD", 0), ("SUBTRACT", 1)))
# Bits of the simulate kernel's ``flags``.
SIMULATE_FLAGS = Table("FLAG", (("RESPAWN", 1),))

TABLES = (EMITTER_SHAPES, FIELD_TYPES, COLLIDER_TYPES, COLLIDER_ROW, FIELD_TEXEL, TRIANGLE_TEXEL, SIZES,
          SORT_KEY_MODES, RANDOM_STREAMS, CSG_STREAMS, CSG_SHAPES, CSG_MODES, SIMULATE_FLAGS)
TABLE_DEFINES = tuple(define for table in TABLES for define in table.defines())
