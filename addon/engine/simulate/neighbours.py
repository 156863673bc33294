"""The neighbour grid: an effect's live particles ordered by grid cell each substep, for kernels that gather.

API (what an interaction kernel needs; issue 46)::

    grid = NeighbourGrid(host, count, state_width, state_rows)   # per effect, made once
    grid.build(pos_age, vel_life, radius)   # grid_keys, the counting sort (binning.Binning) by bin, grid_order,
                                            # grid_neighbours (the lists)
    kernel = Kernel(..., images=(*GRID_IMAGES, ...), constants=(*ENTRY_CONSTANTS, ...),
                    includes=(..., *GRID_INCLUDES))
    host.dispatch(kernel, groups, {**grid.textures, ...}, {"grid_table": grid.table, ...})

After the sort, grid_order copies what a gather reads into images in cell order (Green 2010, "Particle
Simulation using CUDA"): ``grid_sorted`` holds each entry's position and slot, ``grid_velocity`` its velocity, so
a neighbour's data is read contiguously, without an indirection through the sorted slots.  A kernel may run a
thread per entry (``grid_live_entry``: neighbours of consecutive threads are consecutive in memory), keep its own
iterates in entry order and write back to each entry's slot at the end (distinct slots, no atomics); the state
itself stays in slot order.

Then grid_neighbours walks each live entry's 27 cells once and lists its neighbours (their entries, in the
visiting order below) for the step's gathers: a fluid's ten gather passes, a pile's iterations read a list of
~30 entries instead of walking ~216 candidates each time (bench/walk_variants.py, H200, 1M particles: the walk
1.1 ms as a generator, 0.54 as nested loops, a gather from the list 0.15).  A list takes MAX_NEIGHBOURS / 4
RGBA32F texels an entry (texel t of an entry at t x capacity + entry: a workgroup reads side by side) and its
length one R32UI texel.

A Blender 5.2 shader binds at most eight images: the grid takes four (GRID_IMAGES), so a gathering kernel has
four of its own; pack what a particle needs into texels side by side (see granular.py's two-texel iterates)
rather than more images.

and in the kernel's GLSL (shaders/include/neighbours.glsl)::

    Neighbours list = neighbours_of(entry);
    for (int n = 0; n < list.count; n++) {
      int k = neighbour_entry(list, n);   ... gather from entry k (neighbour_position(k): where it was) ...
    }

Cells are cubes of edge ``radius`` (the interaction radius): every particle within the radius of another lies in
one of the 27 cells around it.  Cells are hashed into a table of a fixed size (``table_size``: the next power of
two at or above the slot count, between GRID_TABLE_MIN and GRID_TABLE_MAX) rather than bounding the domain: an
effect may spread anywhere (a fountain, a spill across a floor) and memory stays proportional to its count.  A
cell's bin is its row's hash (y, z) plus x, so the three cells of a row are three consecutive bins, one range of
entries.  Visiting order is fixed: the nine rows in (z, y) order from -1 to +1, each row's bins x from -1 to +1,
a bin an earlier row already had skipped, within a bin by slot (the sort is stable and reads slots in order).
Cells that share a bin are not told apart: every bin is walked once and the distance test alone keeps the
neighbours, so a pair is met exactly once and no candidate's cell is recomputed.  At most MAX_NEIGHBOURS are
listed; a particle with more within the radius counts once a build in ``overflow`` (an atomic counter since the
reset, read like the spawners' lost births).  Dead slots get no bin (they sort last and are never met).  Positions are
read from the state as stored: the FULL layout's world coordinates (interactions need it).
"""

from __future__ import annotations

import numpy as np

from ..primitives.binning import Binning
from ..primitives.scan import linear_size
from ..seam.kernels import Constant, Feature, Image, Kernel
from ..settings.settings import SettingsError

MAX_NEIGHBOURS = 64  # neighbours one particle lists at most (a dense clump is bounded; the rest is overflow)
LIST_TEXELS = MAX_NEIGHBOURS // 4  # RGBA32F texels of an entry's list
GRID_TABLE_MIN = 1 << 12
GRID_TABLE_MAX = 1 << 22  # three 8-bit digit passes of the counting sort
# Particles an interacting effect may have: its grid (keys, the sorted keys and slots, the sort's spare pair: five
# 32-bit words a particle; the entries' position and velocity: two RGBA32F texels; the lists: LIST_TEXELS RGBA32F
# texels and a count) and a solver's images (granular: two iterates of two RGBA32F texels) take 376 bytes a
# particle, 5.9 GiB at the limit, beside the state's 512 MiB.  The entries hold their slot, and the lists their
# entries, as floats: exact below 2^24; the lists of 2^24 entries fill a 16384^2 image (the smallest maximum).
MAX_INTERACTING = 1 << 24
NO_CELL = 0xFFFFFFFF  # a dead slot's key: outside every bin, sorted last

# What a kernel a thread a live entry takes (grid_entry.glsl): grid_table, the hash bins, a power of two.
ENTRY_CONSTANTS = (Constant("INT", "grid_table"),)
# The cells (grid_cell.glsl): the keys and the lists' walk.
CELL_CONSTANTS = (
    Constant("VEC4", "neighbour_grid", components=(
        ("grid_inverse_cell", "x"),  # 1 / cell edge (float32: the reference multiplies the same way)
        ("grid_radius", "y"),  # pairs closer than this are neighbours
    )),
    *ENTRY_CONSTANTS,
)
# What a kernel a thread a live entry reads (grid_entry.glsl): the entries in cell order (position, slot), and a
# bin's range, its offset to the next bin's (the binning has one bin more than the table, never a key, so the
# last bin's end is there too, and where it starts is the number of live entries).
ENTRY_IMAGES = (Image("grid_sorted", "RGBA32F", "READ"), Image("grid_offsets", "R32UI", "READ"))
# Four of the eight images a Blender 5.2 shader may bind, a gathering kernel's: the entries and the lists.
GRID_IMAGES = (*ENTRY_IMAGES, Image("grid_neighbours", "RGBA32F", "READ"), Image("grid_counts", "R32UI", "READ"))
# The entries' velocities in cell order (the fluid's velocity passes and the flock read them).
GRID_VELOCITY = Image("grid_velocity", "RGBA32F", "READ")
GRID_INCLUDES = ("common.glsl", "grid_entry.glsl", "neighbours.glsl")

GRID_KEYS = Kernel(
    "grid_keys",
    images=(Image("pos_age", "RGBA32F", "READ"), Image("vel_life", "RGBA32F", "READ"), Image("grid_keys", "R32UI", "WRITE")),
    constants=(Constant("INT", "count"), *CELL_CONSTANTS),
    includes=("common.glsl", "particle_alive.glsl", "grid_cell.glsl"),
)
# The copy into cell order; with "velocity" (the fluid's velocity passes, flocks and grains read them) the
# velocities too.
GRID_ORDER = Kernel(
    "grid_order",
    images=(Image("pos_age", "RGBA32F", "READ"), Image("grid_items", "R32UI", "READ"),
            Image("grid_sorted", "RGBA32F", "WRITE")),
    constants=(Constant("INT", "count"),),
    features=(Feature("velocity", defines=(("GRID_ORDER_VELOCITY", "1"),),
                      images=(Image("vel_life", "RGBA32F", "READ"), Image("grid_velocity", "RGBA32F", "WRITE"))),),
)
# Each live entry's neighbours listed (grid_neighbours.glsl), the last part of a build.
GRID_NEIGHBOURS = Kernel(
    "grid_neighbours",
    images=(*ENTRY_IMAGES, Image("grid_overflow", "R32UI", atomic=True), Image("grid_neighbours", "RGBA32F", "WRITE"),
            Image("grid_counts", "R32UI", "WRITE")),
    constants=CELL_CONSTANTS,
    includes=("common.glsl", "grid_cell.glsl", "grid_entry.glsl"),
    defines=(("MAX_NEIGHBOURS", str(MAX_NEIGHBOURS)),),
)
GRID_KERNELS = (GRID_KEYS, GRID_ORDER, GRID_NEIGHBOURS)


def table_size(count: int) -> int:
    """Hash bins for ``count`` slots: about one a slot, a power of two (the hash masks)."""
    return min(max(1 << max(count - 1, 1).bit_length(), GRID_TABLE_MIN), GRID_TABLE_MAX)


def check_radius(radius: float) -> None:
    if not radius > 0 or not np.isfinite(radius):
        raise SettingsError(f"interaction_radius must be positive, not {radius}: it is the edge of the neighbour "
                            "grid's cells")


def check_interacting(count: int) -> None:
    if count > MAX_INTERACTING:
        raise SettingsError(f"count {count:,} is more than the neighbour grid holds: an interacting effect has at "
                            f"most {MAX_INTERACTING:,} particles (lower the count, or set Interaction to None)")


def grid_values(radius: float, table: int) -> dict:
    """CELL_CONSTANTS' values by name for a ``radius``: the inverse cell as float32, as the reference takes it."""
    return {"grid_inverse_cell": float(np.float32(1.0) / np.float32(radius)), "grid_radius": float(np.float32(radius)),
            "grid_table": table}


def grid_constants(values: dict) -> dict:
    """CELL_CONSTANTS packed for a dispatch."""
    return {c.name: c.pack(values) for c in CELL_CONSTANTS}


class NeighbourGrid:
    """One effect's neighbour grid: the slots in cell order and each hash bin's range, rebuilt by ``build``."""

    def __init__(self, host, count: int, width: int, rows: int):
        check_interacting(count)
        self.host, self.count, self.table = host, count, table_size(count)
        self.keys = host.texture("grid_keys", width, rows, "R32UI")
        self.sorted = host.texture("grid_sorted", width, rows, "RGBA32F")
        self.velocity = host.texture("grid_velocity", width, rows, "RGBA32F")
        self.lists = host.texture("grid_neighbours", *linear_size(width * rows * LIST_TEXELS, host.max_texture_size),
                                  "RGBA32F")
        self.counts = host.texture("grid_counts", width, rows, "R32UI")
        self.binning = Binning(host, count, self.table + 1)
        self.overflow = host.texture("grid_overflow", 1, 1, "R32UI")
        self.groups = GRID_KEYS.groups_for(width, rows)
        self.values = grid_values(1.0, self.table)  # by name (the reference reads these)
        self.constants = grid_constants(self.values)
        self.reset()

    def reset(self) -> None:
        """The overflow count back to zero (a simulation's reset)."""
        self.host.clear(self.overflow)

    @property
    def textures(self) -> dict:
        """What a gathering kernel binds (GRID_IMAGES)."""
        return {"grid_sorted": self.sorted, "grid_offsets": self.binning.offsets, "grid_neighbours": self.lists,
                "grid_counts": self.counts}

    def build(self, pos_age, vel_life, radius: float, velocity: bool = True) -> None:
        """Order the live slots of the state by the cell of their position (cells of edge ``radius``), copy their
        positions (and ``velocity``: their velocities) into that order, and list each one's neighbours."""
        self.write_keys(pos_age, vel_life, radius)
        self.sort()
        self.order(pos_age, vel_life, velocity)
        self.list_neighbours()

    def write_keys(self, pos_age, vel_life, radius: float) -> None:
        """Each slot's hash bin (grid_keys), the first part of ``build``."""
        check_radius(radius)
        self.values = grid_values(radius, self.table)
        self.constants = grid_constants(self.values)
        self.host.dispatch(GRID_KEYS, self.groups, {"pos_age": pos_age, "vel_life": vel_life, "grid_keys": self.keys},
                           {"count": self.count, **self.constants})

    def sort(self) -> None:
        """The slots in key order and each bin's offset (the counting sort's digit passes, bin_ranges)."""
        self.binning.run(self.keys, self.count)

    def order(self, pos_age, vel_life, velocity: bool = True) -> None:
        """grid_order: the entries' positions and slots (and ``velocity``: velocities) in cell order, the last part
        of ``build``."""
        textures = {"pos_age": pos_age, "grid_items": self.binning.items, "grid_sorted": self.sorted}
        if velocity:
            textures.update(vel_life=vel_life, grid_velocity=self.velocity)
        self.host.dispatch(GRID_ORDER.with_features(*(("velocity",) if velocity else ())), self.groups, textures,
                           {"count": self.count})

    def read_overflow(self) -> int:
        """Particles (one each time) that had more than MAX_NEIGHBOURS within the radius since the reset."""
        return int(self.host.read(self.overflow)[0, 0])

    def list_neighbours(self) -> None:
        """grid_neighbours: each live entry's neighbours listed (the last part of ``build``)."""
        self.host.dispatch(GRID_NEIGHBOURS, self.groups, {"grid_sorted": self.sorted, "grid_offsets": self.binning.offsets,
                                                          "grid_overflow": self.overflow, "grid_neighbours": self.lists,
                                                          "grid_counts": self.counts}, self.constants)

    def neighbour_lists(self, columns: int = MAX_NEIGHBOURS + 1) -> np.ndarray:
        """Each slot's neighbour count then slots in visiting order, ``columns`` words a slot ((count, columns)
        uint32; 1: the counts alone; a dead slot lists none), of the grid as last built, read back: the tests' and
        the benchmarks' view of the lists."""
        entries = self.host.read(self.sorted).reshape(-1, 4)
        live = int(self.host.read(self.binning.offsets).ravel()[self.table])
        slots = entries[:live, 3].astype(np.int64)
        counts = self.host.read(self.counts).ravel()[:live].astype(np.int64)
        capacity = len(entries)
        listed = np.zeros((self.count, columns), np.uint32)
        listed[slots, 0] = counts
        if columns > 1:
            texels = self.host.read(self.lists).reshape(-1, 4)[: LIST_TEXELS * capacity]
            words = texels.reshape(LIST_TEXELS, capacity, 4).transpose(1, 0, 2).reshape(capacity, MAX_NEIGHBOURS)
            shown = min(columns - 1, MAX_NEIGHBOURS)
            listed_here = np.arange(shown) < counts[:, None]  # past a list's count its texels hold anything
            neighbours = np.where(listed_here, words[:live, :shown], 0).astype(np.int64)
            listed[slots, 1:1 + shown] = np.where(listed_here, entries[neighbours, 3], 0)
        return listed
