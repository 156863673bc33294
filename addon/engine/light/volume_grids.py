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
never cleared a frame: Blender's clear of eight large 3D images cost 13 ms on the H200).

Then the GPU makes each grid's part of the file (output/vdb_file.py), so the writer threads only add the header
and topology (the active voxels, their halves and the tree's order, per voxel in numpy, had cost them ~50 ms a
frame on the CPU box, contending for the GIL): ``volume_leaf_masks`` writes every leaf's value mask (voxels whose
halves are not +-0) and buffer size at its rank in the tree's order (computed per leaf, no sort: the leaves a
box holds before a leaf are sums of products of per-axis counts) and a flag (whether it holds any), and tallies
the grid's leaves, bytes and active voxels' bounds (the file's metadata); one scan of the sizes then the flags
(primitives/scan.py) gives each buffer's byte offset and each leaf's index in the file, and ``volume_leaf_bytes``
writes each leaf's record (mask, VDB index, active voxels) and its buffer as the file stores it (mask, metadata
byte, the active voxels' halves) at its byte offset; only those are read back (the real smoke frame's 12.8 MB
against 27 MB of its leaves' dense halves).

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
from ..primitives.scan import Scan
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
LEAF_ROWS = LEAF * LEAF  # a leaf's rows of voxels along z: the threads of a leaf kernel's workgroup
MASK_WORDS = LEAF_VOXELS // 32  # a leaf's value mask in uint32 words
LEAF_HEADER_BYTES = 4 * MASK_WORDS + 1  # a leaf's buffer in the file before its values: its mask, a metadata byte
RECORD_WORDS = MASK_WORDS + 4  # a leaf's record read back: its mask, its lowest voxel's VDB index, its active voxels
TALLY = 8  # R32UI texels a grid's tally: leaves, bytes, lowest and highest active voxel (ordered uints)
LEAF_BYTES_WIDTH = 8192  # R32UI texels a row of the image of the file's leaf buffers
ALLOCATION_STEP = 32  # the grid images are made a multiple of this many voxels a side, reused while the grid fits
# A grid that outgrows the images gets new ones GROWTH times its size a side (a plume that grows makes images
# O(log) times, not every ALLOCATION_STEP: the H200 took 112 ms to make them, llvmpipe 0.6-3 s), unless that would
# pass HEADROOM_BYTES of images: then its own size alone.  4 GiB: the smoke bench's 256-voxel grid with its
# headroom (2.3 GB; its own 1.3 GB), half an artist's 8 GB card; a 512-voxel Auto grid needs 11 GB itself.
GROWTH = 1.25
HEADROOM_BYTES = 4 * 2**30
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
                   ("LEAF_VOXELS", str(LEAF_VOXELS)), ("LEAF_ROWS", str(LEAF_ROWS)), ("MASK_WORDS", str(MASK_WORDS)),
                   ("LEAF_HEADER_BYTES", str(LEAF_HEADER_BYTES)), ("RECORD_WORDS", str(RECORD_WORDS)), ("TALLY", str(TALLY)),
                   *((f"GRID_{name.upper()}", str(code)) for name, code in GRID_CODES.items()))
PLACEMENT = Constant("VEC4", "volume_placement", components=(
    ("grid_corner", "xyz"),  # the grid's corner in world units
    ("voxel_edge", "w"),  # world units
))
SHAPE = Constant("IVEC4", "volume_shape", components=(("grid_shape", "xyz"),))  # the splat adds inside it alone
LEAF_BOX = Constant("IVEC4", "leaf_box", components=(
    ("first_leaf", "xyz"),  # the grid's first leaf, VDB index / LEAF
    ("grid_element", "w"),  # the grid's first element in the leaf images: its place among those packed x leaves
))
LEAF_SPAN = Constant("IVEC4", "leaf_span", components=(
    ("box_leaves", "xyz"),  # the grid's leaves a side
    ("box_elements", "w"),  # the leaves of every grid packed: the elements of the leaf images
))

LANE_BYTES = 4  # a lane of a sum (R32UI) or a value (R32F, RGBA32F)
MOST_LEAF_BYTES = sum(LEAF_HEADER_BYTES + 2 * min(lanes, 3) * LEAF_VOXELS for lanes in GRIDS.values())  # all active
# The GPU memory a voxel of the held images takes: its sums, its values, and its leaf's share of FileLeaves' images
# (the buffers of every voxel active, the records, masks, sizes and offsets): 83 bytes.
VOXEL_BYTES = (LANE_BYTES * sum(GRIDS.values()) + sum(LANE_BYTES * (1 if f == "R32F" else 4) for f in GRID_FORMATS.values())
               + (MOST_LEAF_BYTES + len(GRIDS) * LANE_BYTES * (RECORD_WORDS + MASK_WORDS + 4)) / LEAF_VOXELS)


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


def _leaf_kernel(name: str, grid: str, images: tuple[Image, ...], shared: tuple[Shared, ...]) -> Kernel:
    lanes = min(GRIDS[grid], 3)  # velocity's weight lane stays on the GPU
    return Kernel(name, images=(Image("grid_values", GRID_FORMATS[grid], "READ", dimensions=3), *images),
                  constants=(LEAF_BOX, LEAF_SPAN), shared=(Shared("uint", "s_mask", MASK_WORDS), *shared),
                  local_size=(LEAF_ROWS, 1, 1), includes=("common.glsl", "volume_leaf.glsl"),
                  defines=(*_VOLUME_DEFINES, ("GRID", str(GRID_CODES[grid])), ("LANES", str(lanes))))


LEAF_MASK_KERNELS = {grid: _leaf_kernel("volume_leaf_masks", grid, (
    Image("leaf_masks", "R32UI", "WRITE"), Image("leaf_sizes", "R32UI", "WRITE"), Image("leaf_tally", "R32UI", atomic=True)),
    (Shared("uint", "s_bounds", 6),)) for grid in GRIDS}
LEAF_BYTES_KERNELS = {grid: _leaf_kernel("volume_leaf_bytes", grid, (
    Image("leaf_masks", "R32UI", "READ"), Image("leaf_sizes", "R32UI", "READ"), Image("leaf_offsets", "R32UI", "READ"),
    Image("leaf_records", "R32UI", "WRITE"), Image("leaf_bytes", "R32UI", "WRITE")),
    (Shared("uint", "s_half", LEAF_VOXELS * min(GRIDS[grid], 3)),)) for grid in GRIDS}
SPLAT_KERNELS = {(layout, grid): _splat_kernel(LAYOUTS[layout], grid) for layout in LAYOUTS for grid in GRIDS}
RESOLVE_KERNELS = {grid: _resolve_kernel(grid) for grid in GRIDS}
VOLUME_KERNELS = (*SPLAT_KERNELS.values(), *RESOLVE_KERNELS.values(), *LEAF_MASK_KERNELS.values(),
                  *LEAF_BYTES_KERNELS.values())


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

    @property
    def leaves(self) -> tuple[int, int, int]:
        """The grid's leaves a side."""
        return tuple(n // LEAF for n in self.shape)

    def leaf_constants(self, slot: int, grids: int) -> dict:
        """The leaf kernels' constants for the grid packed ``slot``-th of ``grids``."""
        leaves = math.prod(self.leaves)
        return {LEAF_BOX.name: LEAF_BOX.pack({"first_leaf": tuple(i // LEAF for i in self.index),
                                              "grid_element": slot * leaves}),
                LEAF_SPAN.name: LEAF_SPAN.pack({"box_leaves": self.leaves, "box_elements": grids * leaves})}


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


EMPTY_BOUNDS = np.array([[2**31 - 1] * 3, [-2**31] * 3], np.int32)  # OpenVDB's empty box: max below min


@dataclass(frozen=True)
class GridLeaves:
    """One grid's leaves holding an active voxel, in the tree's order (the file's): ``origins`` (n, 3) their lowest
    voxel's VDB index, ``masks`` (n, 64) uint8 their value masks (bit i of the 512 bits: voxel i = x * 64 + y * 8 + z
    active), ``counts`` (n,) their active voxels, ``buffers`` (uint8) their buffers as the file stores them, one
    after the other: each its mask, a metadata byte (0) and its active voxels' halves (offset order, lanes
    adjacent), ``bounds`` (2, 3) the lowest and highest active voxel's VDB index (OpenVDB's empty box, max below
    min, with none)."""

    origins: np.ndarray
    masks: np.ndarray
    counts: np.ndarray
    buffers: np.ndarray
    bounds: np.ndarray


NO_LEAVES = GridLeaves(np.empty((0, 3), np.int32), np.empty((0, 64), np.uint8), np.empty(0, np.uint32),
                       np.empty(0, np.uint8), EMPTY_BOUNDS)


def from_ordered(words) -> np.ndarray:
    """VDB indices from volume_leaf_masks' ordered uints (the sign bit flipped)."""
    return (np.asarray(words, np.uint32) ^ np.uint32(0x80000000)).view(np.int32)


@dataclass
class Leaves:
    """A frame's grids as read back, by grid name, in reused host memory until ``give_back`` (once written) lets a
    later frame read into it."""

    grids: dict[str, GridLeaves]
    give_back: Callable[[], None]


def _linear(host, name: str, count: int, width: int | None = None):
    """An R32UI image of ``count`` elements, row after row (at most the GPU's texture size each way)."""
    width = min(width or count, host.max_texture_size)
    return host.texture(name, width, min(-(-count // width), host.max_texture_size), "R32UI")


class FileLeaves:
    """A frame's grids' leaves as the file stores them, made on the GPU and read back, in images for grids of up to
    ``leaves`` leaves: per grid, each leaf's mask, buffer size and flag at its element (its grid's slot x leaves +
    its rank in the tree's order; the flags after every grid's sizes) and the tallies, the scan of the sizes and
    flags (byte offsets, leaf indices), then the leaves' records and buffers."""

    def __init__(self, host, leaves: int, memory: RowBuffers | None = None):
        self.host = host
        elements = len(GRIDS) * leaves
        self.tally = host.texture("leaf_tally", TALLY * len(GRIDS), 1, "R32UI")
        self.masks = _linear(host, "leaf_masks", elements * MASK_WORDS)
        self.sizes, self.offsets = (_linear(host, name, 2 * elements) for name in ("leaf_sizes", "leaf_offsets"))
        self.scan = Scan(host, 2 * elements)
        self.records = _linear(host, "leaf_records", elements * RECORD_WORDS)
        self.bytes = _linear(host, "leaf_bytes", -(-leaves * MOST_LEAF_BYTES // 4), LEAF_BYTES_WIDTH)
        # host memory to read into: the last FileLeaves' (a larger grid's images: the frames in flight give their
        # buffers back to it, reused where they hold a read), else new
        self.memory = (memory or RowBuffers(host, ())).read_into((self.records, self.bytes))
        self.packed = tuple(GRIDS)  # the grids the last pack packed, in the leaf images' order

    def pack(self, values: dict, placement: Placement, grids: tuple[str, ...]) -> None:
        """``grids``' leaves of ``values`` (by grid, their 3D images) over ``placement``'s grid, in that order (the
        others are empty): each leaf's mask, buffer size and flag (volume_leaf_masks), the buffers' byte offsets
        and the leaves' indices (one scan of the sizes then the flags: two dispatches fewer than two scans), then
        the leaves' records and buffers (volume_leaf_bytes)."""
        self.host.clear(self.tally)
        self.packed = grids
        for slot, grid in enumerate(grids):
            self.host.dispatch(LEAF_MASK_KERNELS[grid], placement.leaves,
                               {"grid_values": values[grid], "leaf_masks": self.masks, "leaf_sizes": self.sizes,
                                "leaf_tally": self.tally}, placement.leaf_constants(slot, len(grids)))
        self.scan.run(self.sizes, self.offsets, 2 * len(grids) * math.prod(placement.leaves))
        for slot, grid in enumerate(grids):
            self.host.dispatch(LEAF_BYTES_KERNELS[grid], placement.leaves,
                               {"grid_values": values[grid], "leaf_masks": self.masks, "leaf_sizes": self.sizes,
                                "leaf_offsets": self.offsets, "leaf_records": self.records, "leaf_bytes": self.bytes},
                               placement.leaf_constants(slot, len(grids)))

    def read(self) -> Leaves:
        """Each grid's leaves as the file stores them (only their records and buffers are read back), into host
        memory a writer gave back, else new (a fresh buffer is pages to fault in).  Refused (SettingsError) where
        they are more than the images hold."""
        self.host.sleep_until_idle()  # the passes done asleep, as VolumeGrids.bounds waits
        tally = self.host.read(self.tally).reshape(len(GRIDS), TALLY)[[GRID_CODES[grid] for grid in self.packed]]
        leaves, sizes = tally[:, :2].astype(np.int64).T
        records, words = int(leaves.sum()) * RECORD_WORDS, -(-int(sizes.sum()) // 4)
        for needed, image in ((records, self.records), (words, self.bytes)):
            if needed > image.width * image.height:
                raise SettingsError(f"VDB volumes: {int(leaves.sum()):,} leaves of {LEAF}^3 voxels hold particles "
                                    f"in {int(sizes.sum()):,} bytes, more than one frame can read back; set a larger "
                                    "Voxel Size")
        images = (self.records, self.bytes)
        rows = [-(-needed // image.width) for image, needed in zip(images, (records, words))]
        buffers, give_back = self.memory.take(rows)
        record_texels, stream = (self.host.read_rows(image, count, buffer).reshape(-1)[:needed]
                                 for image, count, buffer, needed in zip(images, rows, buffers, (records, words)))
        records_of = np.split(record_texels.reshape(-1, RECORD_WORDS), np.cumsum(leaves)[:-1])
        streams = np.split(stream.view(np.uint8)[:int(sizes.sum())], np.cumsum(sizes)[:-1])
        grids = dict.fromkeys(GRIDS, NO_LEAVES)
        for grid, own, buffers_of, counts in zip(self.packed, records_of, streams, tally):
            bounds = np.stack([from_ordered(~counts[2:5]), from_ordered(counts[5:8])]) if len(own) else EMPTY_BOUNDS
            grids[grid] = GridLeaves(own[:, MASK_WORDS:MASK_WORDS + 3].view(np.int32),
                                     own[:, :MASK_WORDS].view(np.uint8), own[:, MASK_WORDS + 3], buffers_of, bounds)
        return Leaves(grids, give_back)


def held_shape(shape, held, most: int, budget: float = HEADROOM_BYTES) -> tuple[int, int, int]:
    """The images' size (x, y, z) for a grid of ``shape`` where ``held`` are held (None: none yet): ``held`` while
    the grid fits; else each side GROWTH times the grid's (every side, so that sides growing together make
    new images together), at least as held, in whole ALLOCATION_STEPs, at most ``most`` (the GPU's 3D size) --
    the grid's own sides where that headroom would take the images past ``budget`` bytes (VOXEL_BYTES a voxel).
    A plume growing from s to S voxels a side makes images about log(S / s) / log(GROWTH) times, each at most
    GROWTH^3 (~2x) the grid's voxels or those held before."""
    if held is not None and all(n <= side for n, side in zip(shape, held)):
        return tuple(held)

    def sides(growth: float) -> tuple[int, int, int]:
        return tuple(min(max(-(-math.ceil(n * growth) // ALLOCATION_STEP) * ALLOCATION_STEP, side), most)
                     for n, side in zip(shape, held or (0, 0, 0)))
    grown = sides(GROWTH)
    return grown if math.prod(grown) * VOXEL_BYTES <= budget else sides(1.0)


class VolumeGrids:
    """One effect's grids, frame after frame: ``placement`` (the bounds pass, 6 texels read back), then ``build``
    records the splat, resolve and leaf passes and ``read`` reads the leaves back as the file stores them."""

    def __init__(self, host):
        self.host = host
        self.bounds_image = host.texture("shadow_bounds", 6, 1, "R32UI")
        self._held = None  # the grid images' size (x, y, z), None before the first
        self.allocations = 0  # the sets of images made so far (benchmarks count them)
        self.file_leaves = None
        self.sums: dict[str, list] = {}
        self.values: dict[str, object] = {}

    def bounds(self, system, look) -> tuple[np.ndarray, np.ndarray] | None:
        """The system's live particles' world bounds (center +- radius), None with none live."""
        self.queue_bounds(system, look)
        return self.read_bounds()

    def queue_bounds(self, system, look) -> None:
        """The bounds pass recorded, for :meth:`read_bounds` (several effects' passes before one wait)."""
        self.host.clear(self.bounds_image)
        self._dispatch(BOUNDS_KERNELS[system.layout.name], system, look, {"shadow_bounds": self.bounds_image}, {})

    def read_bounds(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The queued bounds pass's bounds, None with none live."""
        self.host.sleep_until_idle()  # asleep, not in the driver's read: the writer threads keep the GIL and cores
        return decode_bounds(self.host.read(self.bounds_image))

    def placement(self, system, look, voxel_size: float) -> Placement | None:
        """Where this frame's grid lies (``voxel_size`` 0: Auto), None with no live particle."""
        return self.place(self.bounds(system, look), system, voxel_size)

    def place(self, found, system, voxel_size: float) -> Placement | None:
        """The grid around the bounds ``found`` (None: no live particle, no grid) at ``voxel_size`` (0: Auto)."""
        if found is None:
            return None
        voxel = voxel_size if voxel_size > 0.0 else auto_voxel(system.settings, *found)
        return place(*found, voxel, self.host.max_texture_3d_size)

    def build(self, system, look, placement: Placement) -> None:
        """Every grid the effect fills splatted and resolved, then its leaves packed as the file stores them; an
        effect that emits nothing leaves emission alone (its sums stay empty, its grid in the file is empty)."""
        self.allocate(placement.shape)
        emits = particle_values(system)["color_start"][3] > 0.0
        built = tuple(grid for grid in GRIDS if grid != "emission" or emits)
        for grid in built:
            self.splat(system, look, placement, grid)
            self.resolve(placement, grid)
        self.pack(placement, built)

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

    def pack(self, placement: Placement, grids: tuple[str, ...] = tuple(GRIDS)) -> None:
        """The file's leaves of ``grids``' ``values`` over ``placement``'s grid, for :meth:`read`."""
        self.file_leaves.pack(self.values, placement, grids)

    def read(self) -> Leaves:
        """Each grid's leaves as the file stores them (FileLeaves.read)."""
        return self.file_leaves.read()

    def allocate(self, shape) -> None:
        """Images for a grid of ``shape``: the ones made before where they hold it (a plume's grid changes shape
        every frame; making and clearing eleven 3D images each time cost more than filling them), else larger
        ones (held_shape; made empty: the resolve keeps the sums so) and FileLeaves for them reading into the
        same host memory, the passes dispatched over ``shape`` alone."""
        self._groups = tuple(-(-n // g) for n, g in zip(shape, VOLUME_GROUP))
        held = held_shape(shape, self._held, self.host.max_texture_3d_size)
        if held == self._held:
            return
        x, y, z = held
        self.sums = {grid: [self.host.volume(f"sum_{lane}", shape=(z, y, x), format="R32UI")
                            for lane in range(lanes)] for grid, lanes in GRIDS.items()}
        self.values = {grid: self.host.volume(f"{grid}_grid", shape=(z, y, x), format=GRID_FORMATS[grid])
                       for grid in GRIDS}
        self.file_leaves = FileLeaves(self.host, x * y * z // LEAF_VOXELS, self.file_leaves and self.file_leaves.memory)
        self._held = held
        self.allocations += 1

    @property
    def image_bytes(self) -> float:
        """The GPU memory the images take (VOXEL_BYTES a voxel held; 0 before the first)."""
        return math.prod(self._held) * VOXEL_BYTES if self._held else 0.0

    def _dispatch(self, kernel, system, look, textures: dict, constants: dict) -> None:
        declared = {constant.name for constant in kernel.constants}
        sizes = {name: value for name, value in particle_values(system).items() if name in declared}
        self.host.dispatch(kernel, system.groups, {**system.textures, "look": look, **textures},
                           {"count": system.count, **sizes, **constants})
