"""Records that cross the Python/GLSL seam in texels, their lanes named once.

A particle's state, a force field, a collider, an emitter triangle, a CSG
primitive, a sprite's screen footprint or an entry of the sprite list travels as a few RGBA texels (image
texels, uniform rows, or one texel in each of several images: ``images``).
Each is declared here as a ``Record`` of named ``Lane`` s (texel + swizzle);
from that one declaration come

- the GLSL both hosts compile (``Record.glsl``, put at the start of the body
  of every kernel that binds the record's ``resource``: ``Kernel.body``): a
  struct of the lanes, ``<name>_from(t0, t1, ...)`` that names the texels'
  lanes, ``load_<name>(index)`` where the kernel reads the resource (an
  image, a uniform array or a sampler) and ``store_<name>(index, record)``
  (one-texel records and records spread over images) where it writes it;
- the numpy side: ``Record.pack`` lays named values out as texels and
  ``Record.read`` names the lanes of texels again (views, no copies);
  ``pack_images``/``read_images`` do the same one image a texel.

A kernel reads a record through these only, never by texel position
(tests/test_seam.py).  ``FRAME_STATS`` is a record of single uint texels that
image atomics add into: its lanes are texel positions (``RECORD_DEFINES``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .tables import SIZES

_SWIZZLE = "xyzw"


@dataclass(frozen=True)
class Lane:
    """``swizzle`` of texel ``texel``; ``rows`` > 1: that many whole texels from ``texel`` on (a matrix's rows,
    an array in GLSL)."""

    name: str
    texel: int
    swizzle: str = "xyzw"
    rows: int = 1
    scalar: str = "float"  # "uint": a lane of an unsigned-integer image (one channel)

    @property
    def glsl_type(self) -> str:
        width = len(self.swizzle)
        return self.scalar if width == 1 else f"vec{width}"

    @property
    def glsl_member(self) -> str:
        return f"{self.glsl_type} {self.name}" + (f"[{self.rows}]" if self.rows > 1 else "")

    def glsl_value(self) -> str:
        """The lane from the texel arguments t0, t1, ... of ``<name>_from``."""
        if self.rows > 1:
            rows = ", ".join(f"t{self.texel + r}" for r in range(self.rows))
            return f"{self.glsl_type}[{self.rows}]({rows})"
        return f"t{self.texel}" if self.swizzle == _SWIZZLE else f"t{self.texel}.{self.swizzle}"

    @property
    def channels(self) -> list[int]:
        return [_SWIZZLE.index(c) for c in self.swizzle]

    def index(self, single: bool) -> tuple:
        """numpy index of the lane in (..., texels, channels) (``single``: in (..., channels))."""
        channels = self.channels[0] if len(self.swizzle) == 1 else slice(self.channels[0], self.channels[-1] + 1)
        if single:
            return (Ellipsis, channels)
        texels = self.texel if self.rows == 1 else slice(self.texel, self.texel + self.rows)
        return (Ellipsis, texels, channels)


@dataclass(frozen=True)
class Record:
    """``texels`` texels of ``channels`` lanes each, in ``resource`` (the image or uniform array a kernel binds):
    texel ``texel`` of record ``index`` there is GLSL ``fetch``; ``store``: the image store of a one-texel record
    (``{value}`` the texel)."""

    type: str  # the GLSL struct
    name: str  # GLSL functions: <name>_from, load_<name>, store_<name>
    texels: int
    lanes: tuple[Lane, ...]
    resource: str = ""
    fetch: str = ""  # GLSL of `index` (index_type) and `{texel}` (the texel)
    store: str = ""
    index_type: str = "int"
    channels: int = 4
    images: tuple[str, ...] = ()  # a record spread over images, one texel in each: texel t is in images[t]
    sample: str = ""  # as ``fetch``, where the kernel binds the resource as a sampler

    def __post_init__(self):
        taken = [(lane.texel + r, c) for lane in self.lanes for r in range(lane.rows) for c in lane.channels]
        if len(taken) != len(set(taken)) or any(t >= self.texels or c >= self.channels for t, c in taken):
            raise ValueError(f"{self.type}: lanes overlap or leave its {self.texels} texels")

    @property
    def single(self) -> bool:
        """One texel: packed as (..., channels), without a texel axis."""
        return self.texels == 1

    def image_of(self, texel: int) -> str:
        """The image or uniform array that holds ``texel``."""
        return self.images[texel] if self.images else self.resource

    def glsl(self, readable: bool = True, writable: bool = False, sampled: bool = False,
             bound: frozenset[str] | None = None) -> str:
        """The struct, ``<name>_from`` and, as the kernel binds ``resource`` (an image, a uniform array or a
        sampler), its load and store; a record spread over images stores only to the images in ``bound`` (a
        variant's optional images) and loads (from images) only where all of them are bound (a kernel may read one alone)."""
        members = "".join(f"  {lane.glsl_member};\n" for lane in self.lanes)
        uint = {lane.texel for lane in self.lanes if lane.scalar == "uint"}
        texels = ", ".join(f"{'uvec4' if t in uint else 'vec4'} t{t}" for t in range(self.texels))
        values = ", ".join(lane.glsl_value() for lane in self.lanes)
        text = (f"struct {self.type}\n{{\n{members}}};\n\n"
                f"{self.type} {self.name}_from({texels})\n{{\n  return {self.type}({values});\n}}\n")
        if self.single:
            text += f"\nvec4 {self.name}_texel({self.type} r)\n{{\n  return {self._texel_of('r')};\n}}\n"
        fetch = self.sample if sampled else self.fetch
        if readable and fetch and (sampled or bound is None or all(image in bound for image in self.images)):
            fetched = ",\n    ".join(fetch.format(texel=t, image=self.image_of(t)) for t in range(self.texels))
            text += (f"\n{self.type} load_{self.name}({self.index_type} index)\n{{\n"
                     f"  return {self.name}_from(\n    {fetched});\n}}\n")
        if writable and self.store:
            values = [f"{self.name}_texel(r)"] if self.single else [self._texel_of("r", t) for t in range(self.texels)]
            stored = "".join(f"  {self.store.format(value=value, image=self.image_of(t))};\n"
                             for t, value in enumerate(values) if bound is None or self.image_of(t) in bound)
            text += f"\nvoid store_{self.name}({self.index_type} index, {self.type} r)\n{{\n{stored}}}\n"
        return text

    def _texel_of(self, record: str, texel: int = 0) -> str:
        """vec4(...) (uvec4 for uint lanes) of the lanes of texel ``texel`` in channel order, zero where no lane
        is."""
        lanes = {lane.channels[0]: lane for lane in self.lanes if lane.texel == texel}
        uint = any(lane.scalar == "uint" for lane in lanes.values())
        parts, channel = [], 0
        while channel < 4:
            lane = lanes.get(channel)
            parts.append(f"{record}.{lane.name}" if lane else ("0u" if uint else "0.0"))
            channel += len(lane.swizzle) if lane else 1
        return f"{'uvec4' if uint else 'vec4'}({', '.join(parts)})"

    def pack(self, values: dict, dtype=np.float32) -> np.ndarray:
        """Texels (..., texels, channels) ((..., channels) for one texel) from every lane's value by name, with
        any leading batch axes; what no lane names is zero."""
        if values.keys() != {lane.name for lane in self.lanes}:
            raise ValueError(f"{self.type}: lanes {sorted(values.keys() ^ {lane.name for lane in self.lanes})} "
                             "given but not declared, or missing")
        lane = self.lanes[0]
        batch = np.shape(values[lane.name])[:np.ndim(values[lane.name]) - self._lane_ndim(lane)]
        texels = np.zeros((*batch, *(() if self.single else (self.texels,)), self.channels), dtype)
        for lane in self.lanes:
            texels[lane.index(self.single)] = values[lane.name]
        return texels

    def _lane_ndim(self, lane: Lane) -> int:
        return (len(lane.swizzle) > 1) + (lane.rows > 1)

    def pack_rows(self, records: list[dict], dtype=np.float32) -> np.ndarray:
        """(max(1, n), texels, channels): one record a row, zero rows for none."""
        rows = np.zeros((max(1, len(records)), self.texels, self.channels), dtype)
        for row, values in zip(rows, records):
            row[...] = self.pack(values, dtype)
        return rows

    def read(self, texels: np.ndarray) -> dict[str, np.ndarray]:
        """Each lane of texels (..., texels, channels) by name (views)."""
        return {lane.name: texels[lane.index(self.single)] for lane in self.lanes}

    def pack_images(self, values: dict, dtype=np.float32) -> tuple[np.ndarray, ...]:
        """``pack`` for a record spread over images: one contiguous (..., channels) array an image."""
        texels = self.pack(values, dtype)
        return tuple(np.ascontiguousarray(texels[..., t, :]) for t in range(self.texels))

    def read_images(self, *images: np.ndarray) -> dict[str, np.ndarray]:
        """Each lane by name of a record spread over ``images`` (one texel in each, (..., channels)): views."""
        return {lane.name: images[lane.texel][lane.index(True)] for lane in self.lanes}

    def read_image(self, image: str, texels: np.ndarray) -> dict[str, np.ndarray]:
        """The lanes one of ``images`` holds, by name, from its texels (..., channels): views."""
        texel = self.images.index(image)
        return {lane.name: texels[lane.index(True)] for lane in self.lanes if lane.texel == texel}


# A particle's state (simulation.py): one texel in each state image at its slot's texel.  Both layouts load
# the same struct: COMPACT's RGBA16F halves load as floats through the image format, and its stores round to
# halves (the kernel clamps what it stores to the layout's STATE_LIMIT).
PARTICLE = Record("Particle", "particle", 2, (
    Lane("position", 0, "xyz"),  # relative to the state origin (world coordinates in the FULL layout)
    Lane("age", 0, "w"),  # seconds; negative: not born yet, or waiting to respawn
    Lane("velocity", 1, "xyz"),  # world units per second
    Lane("life", 1, "w"),  # lifetime in seconds; 0: not (re)born, negative: died and will not respawn
), resource="pos_age", images=("pos_age", "vel_life"), fetch="imageLoad({image}, index)",
    sample="texelFetch({image}, index, 0)", store="imageStore({image}, index, {value})", index_type="ivec2")

FORCE_FIELD = Record("ForceField", "force_field", SIZES["FIELD_TEXELS"], (
    Lane("kind", 0, "x"),  # tables.FIELD_TYPES
    Lane("strength", 0, "y"),
    Lane("falloff_power", 0, "z"),
    Lane("max_distance", 0, "w"),  # 0: no limit
    Lane("position", 1, "xyz"),
    Lane("size", 1, "w"),  # turbulence: world size of a noise tile
    Lane("axis", 2, "xyz"),  # unit
), resource="fields", fetch="imageLoad(fields, ivec2({texel}, index))")

COLLIDER = Record("Collider", "collider", SIZES["COLLIDER_ROWS"], (
    Lane("kind", 0, "x"),  # tables.COLLIDER_TYPES
    Lane("bounce", 0, "y"),
    Lane("friction", 0, "z"),
    Lane("thickness", 0, "w"),  # contact distance: put back at surface + thickness (SDF: at least SDF_CONTACT voxels)
    Lane("half_size", 1, "xyz"),
    Lane("stickiness", 1, "w"),  # speed toward the surface added at each contact (Blender's)
    Lane("to_local", 2, rows=3),  # world to centered local at the step's end
    Lane("start_z", 5),  # the z row of that at the step's start
    Lane("to_world", 6, rows=3),  # centered local to world at the step's end
    Lane("surface_velocity", 9, rows=3),  # velocity per centered local point
    Lane("sdf_low", 12, "xyz"),  # SDF: shape-space corner of the grid's box (voxel (0, 0, 0)'s corner)
    Lane("sdf_inverse_voxel", 12, "w"),  # 1 / voxel edge
    Lane("sdf_high", 13, "xyz"),  # the opposite corner
    Lane("sdf_z_offset", 13, "w"),  # the grid's first layer in the atlas
    Lane("sdf_size", 14, "xyz"),  # voxels along x, y, z
    Lane("sdf_step", 14, "w"),  # the sphere trace's smallest step
    Lane("permeability", 15, "x"),  # chance that a particle passes through
    Lane("kill", 15, "y"),  # 1: particles die at the contact
    Lane("sdf_slack", 15, "z"),  # how much closer than it started a particle must come to touch
    Lane("sdf_surface", 15, "w"),  # 1: an open mesh's slab (sdf.py): sdf_contact traces the slide too
), resource="colliders", fetch=f"colliders[index * {SIZES['COLLIDER_ROWS']} + {{texel}}]")

_TRIANGLE_TEXEL = f"(index * {SIZES['TRIANGLE_TEXELS']} + {{texel}})"
TRIANGLE = Record("Triangle", "triangle", SIZES["TRIANGLE_TEXELS"], (
    Lane("v0", 0, "xyz"),
    Lane("cumulative_area", 0, "w"),  # fraction of the mesh's area up to and including this triangle
    Lane("v1", 1, "xyz"),
    Lane("v2", 2, "xyz"),
    Lane("normal", 3, "xyz"),  # unit
), resource="triangles",
    fetch=f"imageLoad(triangles, ivec2({_TRIANGLE_TEXEL} % TRIANGLE_ROW, {_TRIANGLE_TEXEL} / TRIANGLE_ROW))")

CSG_PRIMITIVE = Record("CsgPrimitive", "csg_primitive", 3, (
    Lane("center", 0, "xyz"),
    Lane("code", 0, "w"),  # shape + CSG_SHAPE_COUNT * mode (tables.CSG_SHAPES, CSG_MODES)
    Lane("size", 1, "xyz"),  # sphere: x the radius; box: half extents
    Lane("color", 2, "xyz"),
), resource="primitives", fetch="imageLoad(primitives, ivec2(index, {texel}))")

SPRITE_SHAPE = Record("SpriteShape", "sprite_shape", 1, (
    Lane("center", 0, "xy"),  # pixels
    Lane("radius", 0, "z"),  # pixels; 0: nothing to draw
    Lane("depth", 0, "w"),  # window depth
), resource="sprite_shapes", fetch="imageLoad(sprite_shapes, index)", store="imageStore(sprite_shapes, index, {value})",
    index_type="ivec2")

# An entry of the frame's alpha sprite list (sprite_footprint.glsl, trail_sprites.glsl): one texel in each list image
# at the entry's texel; a variant without textured sprites binds neither sprite_frames nor sprite_lights, and its
# store_sprite_entry leaves them out (sprite_sheets.SPRITE_FRAMES, SPRITE_LIGHTS).
SPRITE_ENTRY = Record("SpriteEntry", "sprite_entry", 6, (
    *SPRITE_SHAPE.lanes,  # the footprint: radius 0 draws nothing
    Lane("streak", 1, "xy"),  # pixels: the motion the footprint is swept along (0: round)
    Lane("color", 2),  # premultiplied
    Lane("key", 3, "x", scalar="uint"),  # depth key (depth_key); HIDDEN_KEY: sorted last
    Lane("sheet", 4, "x"),  # sheet slot + 1; 0: the soft round sprite
    Lane("turn", 4, "yz"),  # cos and sin of the sprite's angle
    Lane("flipbook", 4, "w"),  # flipbook position
    Lane("lights", 5, "xy"),  # the light's direction in the sprite's frame times the relief; 0: lit evenly
), resource="sprite_keys", images=("sprite_shapes", "sprite_streaks", "sprite_colors", "sprite_keys", "sprite_frames",
                                    "sprite_lights"), store="imageStore({image}, index, {value})", index_type="ivec2")

# An additive quad's frame (quad_tiles.py, quad_frame.glsl): the capsule quad_falloff lights (the round sprite swept
# along its streak).
QUAD_AXES = Record("QuadAxes", "quad_axes", 1, (
    Lane("along", 0, "xy"),  # unit: the streak's direction
    Lane("sweep", 0, "z"),  # half the streak over the radius (SPRITE_SHAPE's): the path's reach either way in radii
    Lane("core", 0, "w"),  # the core's radius over the quad's (the pixel filter's tail lights the rest)
), resource="quad_axes", fetch="imageLoad(quad_axes, index)", store="imageStore(quad_axes, index, {value})",
    index_type="ivec2")

# An additive trail segment's far end (trail_tiles.py, trail_footprint.glsl); its near end's color and half width are
# the footprint's sprite_colors.
TRAIL_END = Record("TrailEnd", "trail_end", 1, (
    Lane("color", 0, "xyz"),  # thin segments already dimmed by their width
    Lane("half_width", 0, "w"),  # pixels, at least 1/2
), resource="trail_ends", fetch="imageLoad(trail_ends, index)", store="imageStore(trail_ends, index, {value})",
    index_type="ivec2")

LIGHT = Record("Light", "light", SIZES["LIGHT_ROWS"], (
    Lane("position", 0, "xyz"),
    Lane("kind", 0, "w"),  # tables.LIGHT_TYPES
    Lane("direction", 1, "xyz"),  # unit: where it shines (sun, spot, area)
    Lane("radius", 1, "w"),  # point, spot: the sphere's radius (the light pass: at least the particle's)
    Lane("radiant", 2, "xyz"),  # color x power: W (point, spot, area) or W/m^2 (sun)
    Lane("shadow_slot", 2, "w"),  # channel of shadow_transmittance; -1: casts no particle shadow
    Lane("spot_cos", 3, "x"),  # cos of half the spot's cone
    Lane("spot_smooth", 3, "y"),  # (1 - spot_cos) x blend: the cosine range the cone's edge fades over
    Lane("half_size", 3, "zw"),  # area: half its sides (a disc: R^2 = x y, the ellipse's area)
), resource="lights", fetch=f"lights[index * {SIZES['LIGHT_ROWS']} + {{texel}}]")

FRAME_STATS = Record("FrameStats", "frame_stats", 2, (
    Lane("overflow", 0, "x"),  # atomic adds that overflowed a channel this frame
    Lane("peak", 1, "x"),  # float bits of the brightest accumulated channel
), resource="stats", channels=1)

# Read through generated GLSL.
RECORDS = (PARTICLE, FORCE_FIELD, COLLIDER, TRIANGLE, CSG_PRIMITIVE, SPRITE_SHAPE, SPRITE_ENTRY, QUAD_AXES, TRAIL_END, LIGHT)
# The stats image's texels by name (STAT_OVERFLOW: x of texel (STAT_OVERFLOW, 0)), #defined in every kernel.
RECORD_DEFINES = tuple((f"STAT_{lane.name.upper()}", str(lane.texel)) for lane in FRAME_STATS.lanes)
