"""An effect as sparse volume grids for VDB files: density, emission and velocity splatted on the GPU, read back.

What each grid holds, per voxel (world units; ``VolumeGrids.build`` records a frame, ``read`` reads it back):

- ``density``: extinction per unit length, the particles' cross-sections over the voxel's volume.  A lit effect's
  particle casts the cross-section the shadow volume splats (shadow_volume.extinction_scale: density x shadow
  density x pi r^2, r its radius at its age); an emissive (unlit) one its disc, pi r^2: the optical depth its
  particles would have as opaque discs, so Cycles' volume shows them about as dense as they cover.
- ``emission``: emitted radiance per unit length, each particle's disc (pi r^2) times its HDR color (the look's
  color x emission strength x brightness variation, particle_color(); a Lit effect's emission is 0), so a ray
  through the volume collects what the discs would add.
- ``velocity``: the particles' velocity (world units per second), the mean of those splatted into the voxel
  weighted by their splat weights (Cycles' motion blur reads it).

Each grid is one pass (``volume_splat``, a variant a grid) adding every live particle over the voxels of its
support (a ball of its radius, MIN_SUPPORT to MAX_SUPPORT voxels, weighted 1 - d^2 / h^2 as the additive quads
fall off, normalized: the particle's whole value lands, spread as wide as the particle, so a sparse cloud is
not a scatter of voxel-sized specks) as fixed point with ``imageAtomicAdd`` on R32UI 3D images (no float
atomics; integer sums do not depend on the order the adds land in, so bakes are byte-identical), rounding
dithered by a fixed hash of (slot, voxel, lane) so that millions of faint particles add up to the right value;
velocity sums are two's complement in the same images (adds wrap); the splat adds inside the grid's shape
alone.  ``volume_resolve`` turns the sums into floats and empties them for the next frame (the images are
never cleared a frame: Blender's clear of eight large 3D images cost 13 ms on the H200), ``volume_pack``
packs the leaves holding anything for the readback, as the half floats the file stores.

The grid's place: the live particles' bounds (center +- radius, the shadow volume's ``shadow_bounds`` pass: a
min/max reduction on the GPU, 6 texels read back), widened by MARGIN voxels each side for the supports and
rounded out to whole VDB leaves (8 voxels) on a lattice fixed in the world (voxel (i, j, k) centered at
(ijk + 0.5) x voxel), so the grid's index is its VDB index.  The voxel edge is set, or Auto: half the effect's
particle size (its radius at birth), doubled until the longest side is at most ``AUTO_LONGEST_SIDE`` voxels.  A
grid of more than ``MAX_VOXELS`` voxels, or a side past the GPU's 3D texture size, is refused (SettingsError).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..look.lighting import TINTED
from ..look.look import COLOR_START, particle_values
from ..seam.kernels import Constant, Image, Kernel, Shared
from ..seam.row_buffers import RowBuffers
from ..seam.state import LAYOUTS
from ..settings.settings import SettingsError
from .shadow_volume import (
    _DEFINES,
    _PARTICLE_CONSTANTS,
    _PARTICLE_INCLUDES,
    _SIZE_ONLY,
    BOUNDS_KERNELS,
    BOUNDS_TEXELS,
    DENSITY_SCALE,
    MAX_PARTICLE_DEPTH,
    VOLUME_GROUP,
    extinction_scale,
)

MAX_VOXELS = 10**9  # the most voxels one frame's grid may have (the limit; 4 GB a float grid)
AUTO_LONGEST_SIDE = 512  # Auto voxel size: coarsened by octaves until the longest side is at most this
LEAF = 8  # a VDB leaf's voxels a side: the grid's corner and size are whole leaves
LEAF_VOXELS = LEAF**3
LEAVES_PER_ROW = 8  # leaves side by side in a row of the packed images (8192 texels)
PACKED_TEXELS = 2  # R32UI texels a voxel in the packed images: four half floats
ALLOCATION_STEP = 32  # the grid images are made a multiple of this many voxels a side, reused while the grid fits
# Fixed-point units of velocity (per world unit per second) and weight, per splat weight of 1: fine enough for a
# support's rim voxels (weights near 1/1000); a voxel's velocity sum wraps past 2^31 units (131072 world units per
# second times the particles it holds), its weight past 65536 particles.
VELOCITY_SCALE = 16384.0
WEIGHT_SCALE = 65536.0
MAX_VELOCITY_UNITS = 2.0**24  # the most one velocity add holds (1024 world units per second)
# A particle's support in voxels: its radius, at least MIN_SUPPORT (a smaller one would fall between voxel centers
# and flicker as it moves) and at most MAX_SUPPORT (9^3 voxels: larger particles are splatted narrower).
MIN_SUPPORT = 1.5
MAX_SUPPORT = 4.0
MARGIN = 2  # voxels around the bounds: a small particle's support reaches past its radius
VOLUME_DITHER_STREAM = 0x7D8  # random_unit stream of the splat's dithered rounding
# The grids, in the order a file holds them: fixed-point sums each pass adds into (velocity: x, y, z, weight)
# and the float channels its resolve writes.
GRIDS = {"density": 1, "emission": 3, "velocity": 4}
GRID_CODES = {name: code for code, name in enumerate(GRIDS)}
GRID_FORMATS = {"density": "R32F", "emission": "RGBA32F", "velocity": "RGBA32F"}

_VOLUME_DEFINES = (*_DEFINES, ("VELOCITY_SCALE", f"{VELOCITY_SCALE:.1f}"), ("WEIGHT_SCALE", f"{WEIGHT_SCALE:.1f}"),
                   ("MAX_VELOCITY_UNITS", f"{MAX_VELOCITY_UNITS:.1f}"), ("MIN_SUPPORT", f"{MIN_SUPPORT!r}"),
                   ("MAX_SUPPORT", f"{MAX_SUPPORT!r}"),
                   ("VOLUME_DITHER_STREAM", f"{VOLUME_DITHER_STREAM}u"), ("LEAF", str(LEAF)),
                   ("LEAF_VOXELS", str(LEAF_VOXELS)), ("PACKED_TEXELS", str(PACKED_TEXELS)),
                   *((f"GRID_{name.upper()}", str(code)) for name, code in GRID_CODES.items()))
PLACEMENT = Constant("VEC4", "volume_placement", components=(
    ("grid_corner", "xyz"),  # the grid's corner in world units
    ("voxel_edge", "w"),  # world units
))
SHAPE = Constant("IVEC4", "volume_shape", components=(("grid_shape", "xyz"),))  # the splat adds inside it alone


def _sums(grid: str, atomic: bool) -> tuple[Image, ...]:
    return tuple(Image(f"sum_{lane}", "R32UI", atomic=atomic, dimensions=3) for lane in range(GRIDS[grid]))


def _splat_kernel(layout, grid: str) -> Kernel:
    emission = grid == "emission"  # the look's color (and a spawned effect's tint); the others need sizes only
    most = MAX_VELOCITY_UNITS if grid == "velocity" else MAX_PARTICLE_DEPTH * DENSITY_SCALE  # one add's units
    return Kernel("volume_splat", images=(*layout.images("READ"), Image("look", "RGBA32F", "READ"), *_sums(grid, atomic=True)),
                  constants=(*_PARTICLE_CONSTANTS, *((COLOR_START,) if emission else ()), PLACEMENT, SHAPE,
                             *((Constant("FLOAT", "extinction_scale"),) if grid == "density" else ())),
                  includes=_PARTICLE_INCLUDES,
                  defines=(*_VOLUME_DEFINES, ("GRID", str(GRID_CODES[grid])), ("SUMS", str(GRIDS[grid])),
                           ("MAX_ADD", f"{most:.1f}"), *(() if emission else _SIZE_ONLY)),
                  features=(TINTED,) if emission else ())


def _resolve_kernel(grid: str) -> Kernel:
    return Kernel("volume_resolve", images=(*_sums(grid, atomic=False), Image("grid_values", GRID_FORMATS[grid], "WRITE",
                                                                        dimensions=3)),
                  constants=(PLACEMENT,) if grid != "velocity" else (), local_size=VOLUME_GROUP, includes=(),
                  defines=(*_VOLUME_DEFINES, ("GRID", str(GRID_CODES[grid])), ("SUMS", str(GRIDS[grid]))))


PACK = Kernel("volume_pack", images=(
    *(Image(f"{grid}_grid", GRID_FORMATS[grid], "READ", dimensions=3) for grid in GRIDS),
    Image("leaf_count", "R32UI", atomic=True), Image("leaf_list", "RGBA32F", "WRITE"),
    Image("packed_density_velocity", "R32UI", "WRITE"), Image("packed_emission", "R32UI", "WRITE")),
    shared=(Shared("uint", "s_leaf", 2),), local_size=(LEAF, LEAF, LEAF), includes=(), defines=_VOLUME_DEFINES)
SPLAT_KERNELS = {(layout, grid): _splat_kernel(LAYOUTS[layout], grid) for layout in LAYOUTS for grid in GRIDS}
RESOLVE_KERNELS = {grid: _resolve_kernel(grid) for grid in GRIDS}
VOLUME_KERNELS = (*SPLAT_KERNELS.values(), *RESOLVE_KERNELS.values(), PACK)


def cross_section_scale(settings) -> float:
    """What a particle's pi r^2 is multiplied by in the density grid: a lit effect's extinction as the shadow
    volume splats it, an emissive one's disc (1)."""
    return extinction_scale(settings) if settings.lighting != "EMISSION" else 1.0


def from_ordered_bits(codes) -> np.ndarray:
    """shadow_place.glsl's from_ordered_bits: the floats shadow_bounds.glsl's uint codes stand for."""
    codes = np.asarray(codes, np.uint32)
    bits = np.where(codes & np.uint32(0x80000000), codes & np.uint32(0x7FFFFFFF), ~codes)
    return bits.astype(np.uint32).view(np.float32)


def decode_bounds(texels) -> tuple[np.ndarray, np.ndarray] | None:
    """(lower, upper) world bounds from the 6 texels of the bounds image, None when nothing live was seen."""
    values = from_ordered_bits(np.asarray(texels).ravel()[:6])
    lower = -values[BOUNDS_TEXELS["LOWER"]:BOUNDS_TEXELS["LOWER"] + 3]
    upper = values[BOUNDS_TEXELS["UPPER"]:BOUNDS_TEXELS["UPPER"] + 3]
    if not (np.isfinite(lower).all() and np.isfinite(upper).all() and (lower <= upper).all()):
        return None
    return lower, upper


@dataclass(frozen=True)
class Placement:
    """Where a frame's grid lies: voxel (i, j, k) of it is VDB voxel ``index`` + (i, j, k), centered in the world
    at (index + ijk + 0.5) x ``voxel``; ``shape`` is (x, y, z) voxels."""

    voxel: float
    index: tuple[int, int, int]
    shape: tuple[int, int, int]

    @property
    def corner(self) -> np.ndarray:
        return np.asarray(self.index, np.float64) * self.voxel

    @property
    def constants(self) -> dict:
        return {PLACEMENT.name: PLACEMENT.pack({"grid_corner": self.corner.astype(np.float32),
                                                "voxel_edge": np.float32(self.voxel)})}

    @property
    def splat_constants(self) -> dict:
        return {**self.constants, SHAPE.name: SHAPE.pack({"grid_shape": self.shape})}


def auto_voxel(settings, lower, upper) -> float:
    """Auto voxel edge: half the particle size, times the octaves that bring the longest side within
    AUTO_LONGEST_SIDE voxels."""
    voxel = max(float(settings.size), 1e-6) / 2.0
    longest = float(np.max(np.asarray(upper, np.float64) - np.asarray(lower, np.float64)))
    while longest / voxel > AUTO_LONGEST_SIDE - 2 * LEAF:
        voxel *= 2.0
    return voxel


def place(lower, upper, voxel: float, max_side: int) -> Placement:
    """The grid around the bounds: MARGIN voxels each side, out to whole leaves.  Refused (SettingsError,
    naming the limit) past MAX_VOXELS voxels or ``max_side`` voxels a side."""
    if not (voxel > 0.0 and math.isfinite(voxel)):
        raise SettingsError(f"VDB voxel size {voxel!r}: it must be a positive length")
    first = np.floor(np.asarray(lower, np.float64) / voxel) - MARGIN
    last = np.floor(np.asarray(upper, np.float64) / voxel) + MARGIN
    start = np.floor(first / LEAF) * LEAF
    shape = (np.floor(last / LEAF) + 1) * LEAF - start
    voxels = float(np.prod(shape))
    if voxels > MAX_VOXELS or shape.max() > max_side:
        extent = np.asarray(upper, np.float64) - np.asarray(lower, np.float64)
        raise SettingsError(
            f"VDB voxel size {voxel:g} would make a grid of {int(shape[0])} x {int(shape[1])} x {int(shape[2])} "
            f"voxels around particles spanning {extent[0]:.3g} x {extent[1]:.3g} x {extent[2]:.3g}: more than "
            f"the limit of {MAX_VOXELS:,} voxels or {max_side} a side; set a larger Voxel Size")
    return Placement(voxel, tuple(int(i) for i in start), tuple(int(n) for n in shape))


def _nothing_to_give_back() -> None:
    """Leaves in memory of their own."""


@dataclass
class Leaves:
    """A frame's active VDB leaves as read back, in the order the GPU packed them (it varies: the file's writer
    orders them by place): ``origins`` (n, 3) their lowest voxel in the grid's voxels, ``grids`` their voxels by
    grid name as half floats, (n, 8, 8, 8[, 3]) indexed [leaf, x, y, z] (emission None: the effect emits
    nothing), in reused host memory until ``give_back`` (once written) lets a later frame read into it."""

    origins: np.ndarray
    grids: dict[str, np.ndarray | None]
    give_back: Callable[[], None] = _nothing_to_give_back


class VolumeGrids:
    """One effect's grids, frame after frame: ``placement`` (the bounds pass, 6 texels read back), then ``build``
    records the splat, resolve and pack passes and ``read`` reads the active leaves back."""

    def __init__(self, host):
        self.host = host
        self.bounds_image = host.texture("shadow_bounds", 6, 1, "R32UI")
        self.leaf_count = host.texture("leaf_count", 1, 1, "R32UI")
        self._held = None  # the grid images' size (x, y, z), None before the first
        self.sums: dict[str, list] = {}
        self.values: dict[str, object] = {}
        self.emits = False  # whether the last frame built splatted emission

    def bounds(self, system, look) -> tuple[np.ndarray, np.ndarray] | None:
        """The system's live particles' world bounds (center +- radius), None with none live."""
        self.host.clear(self.bounds_image)
        self._dispatch(BOUNDS_KERNELS[system.layout.name], system, look, {"shadow_bounds": self.bounds_image}, {})
        self.host.sleep_until_idle()  # asleep, not in the driver's read: the writer threads keep the GIL and cores
        return decode_bounds(self.host.read(self.bounds_image))

    def placement(self, system, look, voxel_size: float) -> Placement | None:
        """Where this frame's grid lies (``voxel_size`` 0: Auto), None with no live particle."""
        found = self.bounds(system, look)
        if found is None:
            return None
        voxel = voxel_size if voxel_size > 0.0 else auto_voxel(system.settings, *found)
        return place(*found, voxel, self.host.max_texture_3d_size)

    def build(self, system, look, placement: Placement) -> None:
        """Every grid splatted (emission only where the effect emits) and resolved, then the active leaves
        packed."""
        self.allocate(placement.shape)
        self.emits = particle_values(system)["color_start"][3] > 0.0
        for grid in GRIDS:
            if grid != "emission" or self.emits:
                self.splat(system, look, placement, grid)
            self.resolve(placement, grid)
        self.pack(placement.shape)

    def splat(self, system, look, placement: Placement, grid: str) -> None:
        """The live particles added into ``grid``'s sums (empty before: the last resolve left them so)."""
        kernel = SPLAT_KERNELS[system.layout.name, grid].for_effect(system.settings)
        scale = {"extinction_scale": cross_section_scale(system.settings)} if grid == "density" else {}
        self._dispatch(kernel, system, look, {**self._sum_images(grid), **kernel.bindings(system=system)},
                       {**placement.splat_constants, **scale})

    def resolve(self, placement: Placement, grid: str) -> None:
        """``grid``'s sums as floats (``values``), the sums emptied for the next frame (no clear of the images)."""
        resolve = RESOLVE_KERNELS[grid]
        self.host.dispatch(resolve, self._groups, {**self._sum_images(grid), "grid_values": self.values[grid]},
                           placement.constants if resolve.constants else {})

    def _sum_images(self, grid: str) -> dict:
        return {f"sum_{lane}": image for lane, image in enumerate(self.sums[grid])}

    def pack(self, shape) -> None:
        """The leaves of ``values`` over a grid of ``shape`` that hold anything, packed for :meth:`read`."""
        self.host.clear(self.leaf_count)
        self.host.dispatch(PACK, tuple(n // LEAF for n in shape),
                           {**{f"{grid}_grid": self.values[grid] for grid in GRIDS}, "leaf_count": self.leaf_count,
                            "leaf_list": self.leaf_list, "packed_density_velocity": self.packed[0],
                            "packed_emission": self.packed[1]}, {})

    def read(self) -> Leaves:
        """The active leaves (only they are read back; the emission only where the effect emits), into host
        memory a writer gave back, else new (a fresh buffer is pages to fault in).  Refused (SettingsError) where
        more leaves are active than the packed images hold."""
        self.host.sleep_until_idle()  # the passes done asleep, as in bounds
        count = int(self.host.read(self.leaf_count).ravel()[0])
        capacity = self.leaf_list.width * self.leaf_list.height
        if count > capacity:
            raise SettingsError(f"VDB volumes: {count:,} leaves of {LEAF}^3 voxels hold particles, more than the "
                                f"{capacity:,} one frame can read back; set a larger Voxel Size")
        rows = -(-count // LEAVES_PER_ROW)
        origins = self.host.read_rows(self.leaf_list, rows).reshape(-1, 4)[:count, :3].astype(np.int64)
        buffers, give_back = self._memory.take()
        density_velocity, emission = (
            self.host.read_rows(packed, rows, buffer).view(np.float16).reshape(-1, LEAF, LEAF, LEAF, 4)[:count]
            if read else None for packed, buffer, read in zip(self.packed, buffers, (True, self.emits)))
        return Leaves(origins, {"density": density_velocity[..., 0], "velocity": density_velocity[..., 1:],
                                "emission": None if emission is None else emission[..., :3]}, give_back)

    def allocate(self, shape) -> None:
        """Images for a grid of ``shape``: the ones made before where they hold it (a plume's grid changes shape
        every frame; making and clearing eleven 3D images each time cost more than filling them), else ones
        ALLOCATION_STEP voxels larger a side (made empty: the resolve keeps the sums so), the passes dispatched
        over ``shape`` alone."""
        self._groups = tuple(-(-n // g) for n, g in zip(shape, VOLUME_GROUP))
        if self._held is not None and all(n <= held for n, held in zip(shape, self._held)):
            return
        most = self.host.max_texture_3d_size
        x, y, z = (min(max(-(-n // ALLOCATION_STEP) * ALLOCATION_STEP, held), most)
                   for n, held in zip(shape, self._held or (0, 0, 0)))
        self.sums = {grid: [self.host.volume(f"sum_{lane}", shape=(z, y, x), format="R32UI")
                            for lane in range(lanes)] for grid, lanes in GRIDS.items()}
        self.values = {grid: self.host.volume(f"{grid}_grid", shape=(z, y, x), format=GRID_FORMATS[grid])
                       for grid in GRIDS}
        leaves = x * y * z // LEAF_VOXELS
        rows = min(-(-leaves // LEAVES_PER_ROW), self.host.max_texture_size)
        self.leaf_list = self.host.texture("leaf_list", LEAVES_PER_ROW, rows, "RGBA32F")
        self.packed = [self.host.texture(name, LEAVES_PER_ROW * LEAF_VOXELS * PACKED_TEXELS, rows, "R32UI")
                       for name in ("packed_density_velocity", "packed_emission")]
        self._memory = RowBuffers(self.host, self.packed)  # host memory to read the packed images into
        self._held = (x, y, z)

    def _dispatch(self, kernel, system, look, textures: dict, constants: dict) -> None:
        declared = {constant.name for constant in kernel.constants}
        sizes = {name: value for name, value in particle_values(system).items() if name in declared}
        self.host.dispatch(kernel, system.groups, {**system.textures, "look": look, **textures},
                           {"count": system.count, **sizes, **constants})
