"""Sorting particles on the GPU: incremental odd-even merge passes, a full sort, keys, sortedness.

Keys (``shaders/include/particle_key.glsl``) are ordered uints whose ascending order is the
order wanted: view depth far to near for back-to-front alpha blending, or the
grid cell in Morton order (24-bit keys) for cache-coherent volume lookups.  Particles
waiting to be (re)born are keyed where they will appear (the emitter), so
the sort places them while the respawn skip hides them; dead particles and
NaN keys sort last.

Two ways to sort, both over the same schedules (``sort_schedule.py``):

* direct: the compare-and-swap moves the particle state texels themselves
  (32 or 16 bytes a particle, by state layout), keyed on the fly; the simulation then reads sorted
  state with no indirection;
* key-index: the passes move (key, index) pairs in two R32UI images shaped
  like the state (8 bytes a particle); keys are refreshed through the indices
  every frame and drawing reads state through them.

The full sort of key-index pairs (``FULL_SORT``) is a stable LSD radix sort
on the binning primitive (``binning.py``), 8 bits a pass, or an all-ascending bitonic sort whose strides
below one workgroup's block run in shared memory (one dispatch per merge) and
whose long strides run a few per dispatch in registers; for a sorted state,
one gather dispatch follows.

Its variants are shapes (block sizes, pass strides, the keys' layout), chosen by the data's size and the device,
not features an effect asks for.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from ..primitives.binning import ALL_KEYS, BINNING_KERNELS, DigitPasses, digit_shifts
from ..primitives.sort_schedule import SortStep, comparator_slots, stages
from ..seam.kernels import Constant, Image, Kernel, Shared
from ..seam.state import LAYOUTS
from ..seam.tables import SIZES, SORT_KEY_MODES

KEY_DEPTH, KEY_GRID = SORT_KEY_MODES["DEPTH"], SORT_KEY_MODES["GRID"]
GRID_BINS = SIZES["GRID_CELLS"] ** 3  # grid keys: the cells of each axis, interleaved (particle_key.glsl)
KENDALL_SAMPLES = 1 << 16
MAX_GROUPS_X = 32768  # below the 65535 workgroups per dimension every GPU allows
# The full sort's shape, chosen by measurement: bench/results/nvidia-h200-pcie-sse2-2026-11-21-sort.json (full_variant).
SORT_BLOCK = 1024  # pairs a workgroup sorts in shared memory (8 KiB)
FUSED_STRIDES = 3  # long strides one sort_merge dispatch does in registers
# Radix over bitonic, chosen by measurement: bench/results/nvidia-h200-pcie-sse2-2026-11-21-sort.json (full_radix, full).
FULL_SORT = "RADIX"

KEY_CONSTANTS = (
    Constant("INT", "key_mode"),  # tables.SORT_KEY_MODES
    Constant("VEC4", "key_axis", components=(("depth_axis", "xyz"), ("depth_offset", "w"))),  # view z = axis . p + offset
    Constant("VEC4", "key_grid", components=(("grid_origin", "xyz"), ("cell_size", "w"))),
    Constant("VEC4", "key_spawn", components=(("spawn_position", "xyz"), ("spawn_keyed", "w"))),  # keyed: 1 or 0
)
PASS_CONSTANTS = (Constant("INT", "count"), Constant("INT", "slots"), Constant("INT", "p"), Constant("INT", "k"))
PAIRS = (Image("keys", "R32UI"), Image("indices", "R32UI"))

SORT_PASS_KEY_INDEX = Kernel("sort_network", images=PAIRS, constants=PASS_CONSTANTS)


def _sort_keys_kernel(layout) -> Kernel:
    return Kernel(
        "sort_keys",
        images=(*layout.images("READ"), *PAIRS),
        constants=(Constant("INT", "count"), Constant("INT", "reset_indices"), *KEY_CONSTANTS),
        includes=("common.glsl", "particle_key.glsl"),
    )


def _sort_pass_direct_kernel(layout) -> Kernel:
    return Kernel(
        "sort_network",
        images=layout.images(),
        constants=(*PASS_CONSTANTS, *KEY_CONSTANTS),
        includes=("common.glsl", "particle_key.glsl"),
        defines=(("SORT_DIRECT", "1"),),
    )


def _sort_gather_kernel(layout) -> Kernel:
    return Kernel(
        "sort_gather",
        images=(Image("indices", "R32UI", "READ"), *layout.images("READ"),
                Image("sorted_pos_age", layout.format, "WRITE"), Image("sorted_vel_life", layout.format, "WRITE")),
        constants=(Constant("INT", "count"),),
    )


# One per state layout (state.LAYOUTS), like the simulation's own kernels.
SORT_KEYS_KERNELS = {name: _sort_keys_kernel(layout) for name, layout in LAYOUTS.items()}
SORT_PASS_DIRECT_KERNELS = {name: _sort_pass_direct_kernel(layout) for name, layout in LAYOUTS.items()}
SORT_GATHER_KERNELS = {name: _sort_gather_kernel(layout) for name, layout in LAYOUTS.items()}

@cache
def sort_local(block: int) -> Kernel:
    """Shared-memory passes over blocks of ``block`` pairs (a power of two >= 2)."""
    return Kernel(
        "sort_local",
        images=PAIRS,
        constants=(Constant("INT", "count"), Constant("INT", "merge_size")),
        shared=(Shared("uint", "s_keys", block), Shared("uint", "s_indices", block)),
        local_size=(min(block // 2, 1024), 1, 1),
        defines=(("SORT_BLOCK", str(block)),),
    )


@cache
def sort_merge(fused: int) -> Kernel:
    """``fused`` long strides of a bitonic merge per dispatch, in registers."""
    return Kernel(
        "sort_merge",
        images=PAIRS,
        constants=(Constant("INT", "count"), Constant("INT", "slots"), Constant("INT", "size"),
                   Constant("INT", "stride")),
        defines=(("FUSED_STRIDES", str(fused)),),
    )


SORTEDNESS = Kernel(
    "sortedness",
    images=(Image("keys", "R32UI", "READ"), Image("counts", "R32UI", atomic=True)),
    constants=(Constant("INT", "count"), Constant("INT", "samples"), Constant("INT", "seed")),
    shared=(Shared("uint", "s_counts", 3),),
    includes=("common.glsl", "random.glsl"),
)
SORT_KERNELS = (*SORT_KEYS_KERNELS.values(), SORT_PASS_KEY_INDEX, *SORT_PASS_DIRECT_KERNELS.values(),
                sort_local(SORT_BLOCK), sort_merge(FUSED_STRIDES),
                *SORT_GATHER_KERNELS.values(), SORTEDNESS, *BINNING_KERNELS)


@dataclass(frozen=True)
class SortKey:
    """What a key means: the mode and its parameters, in world space.

    ``spawn``: where particles waiting to be (re)born will appear (the
    emitter); those hidden particles are keyed there, so the sort moves them
    into place while the simulation's respawn skip holds them back.  Without
    it they sort last with the other particles that do not show.
    """

    mode: int
    axis: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    grid: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 1.0)
    spawn: tuple[float, float, float] | None = None

    @classmethod
    def view_depth(cls, view: np.ndarray, spawn=None) -> SortKey:
        """Back to front for a world-to-view matrix (the camera looks down -z)."""
        return cls(KEY_DEPTH, axis=tuple(float(v) for v in np.asarray(view, dtype=np.float64)[2]), spawn=_point(spawn))

    @classmethod
    def grid_cell(cls, origin, cell_size: float, spawn=None) -> SortKey:
        if not cell_size > 0:
            raise ValueError(f"grid cell size must be positive, not {cell_size}")
        return cls(KEY_GRID, grid=(*(float(v) for v in origin), float(cell_size)), spawn=_point(spawn))

    def constants(self, origin=(0.0, 0.0, 0.0)) -> dict:
        """Push constants for positions stored relative to ``origin`` (the state origin)."""
        origin = np.asarray(origin, dtype=np.float64)
        axis = np.asarray(self.axis, dtype=np.float64)
        grid = np.asarray(self.grid, dtype=np.float64)
        spawn = (0.0, 0.0, 0.0, 0.0) if self.spawn is None else (*(np.asarray(self.spawn) - origin), 1.0)
        return {
            "key_mode": self.mode,
            "key_axis": (*axis[:3], axis[3] + axis[:3] @ origin),
            "key_grid": (*(grid[:3] - origin), grid[3]),
            "key_spawn": tuple(float(v) for v in spawn),
        }


def _point(value) -> tuple[float, float, float] | None:
    return None if value is None else tuple(float(v) for v in value)


def linear_groups(invocations: int, local_size: int = 256) -> tuple[int, int, int]:
    """A 2D grid of workgroups covering a 1D range (the kernels flatten y * x)."""
    groups = max(1, -(-invocations // local_size))
    x = min(groups, MAX_GROUPS_X)
    return (x, -(-groups // x), 1)


def odd_even_pass(host, kernel, textures: dict, count: int, p: int, k: int, extra: dict | None = None) -> None:
    """One dispatch of pass (p, k): over key-index pairs, or over the state with SORT_PASS_DIRECT_KERNELS."""
    slots = comparator_slots(count, p, k)
    host.dispatch(kernel, linear_groups(slots), textures, {"count": count, "slots": slots, "p": p, "k": k, **(extra or {})})


class KeyIndexPairs:
    """(key, index) pairs in two R32UI images shaped like a system's state images."""

    def __init__(self, host, width: int, rows: int, count: int, block: int = SORT_BLOCK, fused: int = FUSED_STRIDES):
        self.host = host
        self.count = count
        self.block, self.fused = block, fused
        self.keys = host.texture("sort_keys", width, rows, "R32UI")
        self.indices = host.texture("sort_indices", width, rows, "R32UI")
        self.counts = host.texture("sort_counts", 4, 1, "R32UI")
        self._radix = None  # scratch of the radix sort, made on first use
        self._binning = None  # the counting sort's passes and its output pair, made on first use

    @property
    def textures(self) -> dict:
        return {"keys": self.keys, "indices": self.indices}

    def refresh_keys(self, system, key: SortKey, reset_indices: bool) -> None:
        """Keys of the particles the indices point at (or of slot i, starting over)."""
        self.host.dispatch(
            SORT_KEYS_KERNELS[system.layout.name], linear_groups(self.count),
            {**system.textures, **self.textures},
            {"count": self.count, "reset_indices": int(reset_indices), **key.constants(system.origin)},
        )

    def odd_even_passes(self, passes) -> None:
        for p, k in passes:
            odd_even_pass(self.host, SORT_PASS_KEY_INDEX, self.textures, self.count, p, k)

    def full_sort(self, algorithm: str = FULL_SORT) -> None:
        """Exact ascending sort.

        'BITONIC': every block in shared memory, then per longer merge its long
        strides a few at a time in registers and its short ones in shared memory.
        'RADIX': stable LSD radix sort on the scan (equal keys keep their order).
        """
        if algorithm == "RADIX":
            if self.count >= 2:
                self._radix = self._radix or RadixSort(self)
                self._radix.run()
            return
        for kernel, groups, constants in full_sort_dispatches(self.count, self.block, self.fused):
            self.host.dispatch(kernel, groups, self.textures, constants)

    def bin_sort(self, bins: int = GRID_BINS, shifts=None) -> None:
        """Stable counting sort by key (keys >= ``bins`` last): ceil(log2(bins) / 8) binning passes.

        Grid keys hold 24 bits, so three passes where the full radix sort takes four.
        ``shifts``: only those digit passes (binning.DigitPasses), a coarser order.
        """
        if self.count < 2:
            return
        wanted = (bins, list(shifts) if shifts is not None else digit_shifts(bins))
        if self._binning is None or (self._binning[0].bins, self._binning[0].shifts) != wanted:
            spare = tuple(self.host.texture(t.name, t.width, t.height, "R32UI") for t in (self.keys, self.indices))
            self._binning = (DigitPasses(self.host, self.count, bins, shifts=shifts), spare)
        passes, out = self._binning
        passes.run(self.keys, self.indices, *out, self.count)
        self._binning = (passes, (self.keys, self.indices))
        self.keys, self.indices = out

    def sortedness(self, samples: int = KENDALL_SAMPLES, seed: int = 0) -> tuple[float, float]:
        """(fraction of adjacent pairs in order, sampled Kendall tau) of the keys."""
        if self.count < 2:
            return 1.0, 1.0
        self.host.clear(self.counts)
        self.host.dispatch(
            SORTEDNESS, linear_groups(max(self.count - 1, samples)),
            {"keys": self.keys, "counts": self.counts},
            {"count": self.count, "samples": samples, "seed": seed},
        )
        adjacent, concordant, discordant, _ = (int(v) for v in self.host.read(self.counts)[0])
        pairs = concordant + discordant
        return adjacent / (self.count - 1), (concordant - discordant) / pairs if pairs else 1.0


class RadixSort:
    """Stable LSD radix sort of a :class:`KeyIndexPairs`' pairs: the binning's digit passes over all 32 bits.

    Four passes of 8 bits (``binning.DigitPasses``: per digit a contention-free
    count per tile, the scan, a stable scatter), in place through spare images.
    """

    def __init__(self, pairs: KeyIndexPairs):
        self.pairs = pairs
        self.passes = DigitPasses(pairs.host, pairs.count, ALL_KEYS)

    def run(self) -> None:
        pairs = self.pairs
        self.passes.run(pairs.keys, pairs.indices, pairs.keys, pairs.indices, pairs.count)


def method_for(key: SortKey) -> str:
    """Key-index for drawing order, direct for coherence.

    By measurement (bench/results/nvidia-h200-pcie-sse2-2026-11-21-sort.json, pass_* and key_refresh),
    from three passes a frame key-index is cheaper, and drawing reads through the
    indices at no cost to the simulation.  Grid-cell order is for the
    simulation's own memory accesses, so it must move the state: direct.
    """
    return "DIRECT" if key.mode == KEY_GRID else "KEY_INDEX"


class ParticleSorter:
    """One effect's sort, kept across frames.

    ``method`` 'DIRECT' reorders the state itself; 'KEY_INDEX' keeps the state
    in place and ``indices`` holds the drawing order.
    """

    def __init__(self, system, method: str = "DIRECT"):
        if method not in ("DIRECT", "KEY_INDEX"):
            raise ValueError(f"sort method must be DIRECT or KEY_INDEX, not {method!r}")
        self.system = system
        self.host = system.host
        self.method = method
        width, rows = system.pos_age.width, system.pos_age.height
        self.pairs = KeyIndexPairs(self.host, width, rows, system.count)
        self.step = SortStep(system.count)
        self._spare = None
        self._fresh = True  # the indices are not a permutation yet

    @property
    def indices(self):
        """The drawing order for key-index sorting (None when the state itself is sorted)."""
        return self.pairs.indices if self.method == "KEY_INDEX" else None

    def reset(self) -> None:
        """Forget the order (the system was reset): the schedule starts over."""
        self.step.reset()
        self._fresh = True

    def incremental(self, key: SortKey, passes: int) -> None:
        """The next ``passes`` passes of the odd-even merge sort, resumed where the last frame stopped."""
        schedule = self.step.take(passes)
        if self.method == "KEY_INDEX":
            self.pairs.refresh_keys(self.system, key, reset_indices=self._fresh)
            self._fresh = False
            self.pairs.odd_even_passes(schedule)
            return
        for p, k in schedule:
            odd_even_pass(self.host, SORT_PASS_DIRECT_KERNELS[self.system.layout.name], self.system.textures,
                          self.system.count, p, k, key.constants(self.system.origin))
        if schedule:
            self.system.state_changed()  # moved between slots

    def full(self, key: SortKey) -> None:
        """Exact sort now (bake, camera cut); the incremental schedule starts over."""
        self.pairs.refresh_keys(self.system, key, reset_indices=self._fresh or self.method == "DIRECT")
        self._fresh = False
        if key.mode == KEY_GRID:
            self.pairs.bin_sort()  # a counting sort by cell
        else:
            self.pairs.full_sort()
        self.step.reset()
        if self.method == "DIRECT":
            self._gather()

    def _gather(self) -> None:
        """Reorder the state by the sorted indices into the spare state images, then swap."""
        system = self.system
        w, h, layout = system.pos_age.width, system.pos_age.height, system.layout.format
        if self._spare is None or self._spare[0].format != layout:
            self._spare = (self.host.texture("pos_age", w, h, layout), self.host.texture("vel_life", w, h, layout))
        sorted_pos_age, sorted_vel_life = self._spare
        self.host.dispatch(
            SORT_GATHER_KERNELS[system.layout.name], system.groups,
            {"indices": self.pairs.indices, **system.textures,
             "sorted_pos_age": sorted_pos_age, "sorted_vel_life": sorted_vel_life},
            {"count": system.count},
        )
        self._spare = (system.pos_age, system.vel_life)
        system.pos_age, system.vel_life = sorted_pos_age, sorted_vel_life
        system.state_changed()  # moved between slots

    def sortedness(self, key: SortKey) -> tuple[float, float]:
        """(adjacent pairs in order, sampled Kendall tau) of the current drawing order."""
        reset = self.method == "DIRECT" or self._fresh
        self.pairs.refresh_keys(self.system, key, reset_indices=reset)
        self._fresh = False
        return self.pairs.sortedness(seed=self.system.step_index)


def sort_key_for(settings, view: np.ndarray, spawn=None) -> SortKey | None:
    """The key an effect's settings ask for (None: no sorting), for a world-to-view matrix.

    ``spawn``: the emitter's position, where waiting particles are keyed.
    """
    order = settings.sort_order
    if order in ("AUTO", "NONE"):  # Alpha sprites need no drawing order: sprites.py orders them per pixel
        return None
    if order == "GRID_CELL":
        return SortKey.grid_cell((0.0, 0.0, 0.0), settings.sort_cell_size, spawn)
    return SortKey.view_depth(view, spawn)


CUT_DEGREES = 30.0  # a view turning more than this between frames is a camera cut


def is_camera_cut(previous_view: np.ndarray, view: np.ndarray) -> bool:
    """True when the view direction turned more than CUT_DEGREES (a new shot, another camera)."""
    a, b = (np.asarray(m, dtype=np.float64)[2, :3] for m in (previous_view, view))
    cosine = np.dot(a, b) / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-30)
    return bool(cosine < np.cos(np.radians(CUT_DEGREES)))


class EffectSort:
    """One effect's sorting as the renderer drives it.

    Grid-cell order moves the state and runs with the simulation
    (``after_step``): its passes follow from the frame number, so a timeline
    replay from a checkpoint puts every particle in the same slot again (the
    simulation's randomness is keyed by slot).  View-depth order sorts
    key-index pairs just before drawing (``before_draw``) and never moves the
    state.  Either runs a full sort when it starts, after a jump in time, at a
    camera cut, when ``exact`` (bake) or when ``sort_passes`` covers the whole
    schedule (cheaper and exact); otherwise ``sort_passes`` incremental passes.
    """

    def __init__(self, system):
        self.system = system
        self.sorter = None
        self.key = None
        self.view = None
        self.frame = None  # the frame last sorted for drawing

    @property
    def indices(self):
        return self.sorter.indices if self.sorter else None

    def sortedness(self) -> tuple[float, float] | None:
        """(adjacent pairs in order, sampled Kendall tau) for the last key, None when unsorted.

        Counted on the GPU and read back: a sync, so for the stats, not every frame.
        """
        return self.sorter.sortedness(self.key) if self.sorter else None

    def reset(self) -> None:
        if self.sorter:
            self.sorter.reset()
        self.frame = None

    def after_step(self, frames_since_start: int, spawn) -> None:
        """Grid-cell order for the frame just simulated (nothing for other orders)."""
        key = sort_key_for(self.system.settings, np.identity(4), spawn)
        if key is None or key.mode != KEY_GRID:
            return
        passes = self.system.settings.sort_passes
        if self._use(key) or frames_since_start == 0 or passes >= len(self.sorter.step.passes):
            self.sorter.full(key)
        else:
            self.sorter.step.position = frames_since_start * passes % len(self.sorter.step.passes)
            self.sorter.incremental(key, passes)

    def before_draw(self, view: np.ndarray, spawn, frame: int, exact: bool = False) -> None:
        """View-depth order for drawing ``frame`` from ``view`` (a world-to-view matrix)."""
        key = sort_key_for(self.system.settings, view, spawn)
        if key is None:
            self.sorter = self.key = None
        if key is None or key.mode != KEY_DEPTH:
            return
        full = (self._use(key) or exact or self.frame is None or frame not in (self.frame, self.frame + 1)
                or is_camera_cut(self.view, view)
                or self.system.settings.sort_passes >= len(self.sorter.step.passes))
        if full:
            self.sorter.full(key)
        else:
            self.sorter.incremental(key, self.system.settings.sort_passes)
        self.view, self.frame = np.asarray(view), frame

    def _use(self, key: SortKey) -> bool:
        """Take ``key``; True when that needs a new sorter (first use, or the method changed)."""
        self.key = key
        if self.sorter is None or self.sorter.method != method_for(key):
            self.sorter = ParticleSorter(self.system, method_for(key))
            return True
        return False


def full_sort_dispatches(count: int, block: int = SORT_BLOCK, fused: int = FUSED_STRIDES):
    """(kernel, groups, constants) of every dispatch of the full sort of ``count`` pairs.

    The same network as ``sort_schedule.bitonic_passes``, grouped: strides
    below ``block`` run in shared memory, longer ones ``fused`` per dispatch.
    """
    if count < 2:
        return []
    padded = 1 << stages(count)
    local = sort_local(block)
    local_groups = linear_groups(count, block) if padded > block else (1, 1, 1)
    dispatches = [(local, local_groups, {"count": count, "merge_size": 0})]
    size = 2 * block
    while size <= padded:
        stride = size // 2
        while stride >= block:
            strides = min(fused, stride.bit_length() - block.bit_length() + 1)
            slots = padded >> strides
            dispatches.append((sort_merge(strides), linear_groups(slots),
                               {"count": count, "slots": slots, "size": size, "stride": stride}))
            stride >>= strides
        dispatches.append((local, local_groups, {"count": count, "merge_size": size}))
        size *= 2
    return dispatches


__all__ = ["ParticleSorter", "KeyIndexPairs", "SortKey"]
