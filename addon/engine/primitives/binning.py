"""Binning without atomic contention: the counting sort under the radix sort, tile lists and grid order.

Keys and a bin count in; per-bin counts, exclusive offsets and the item
indices in bin order out (items of one bin keep their order).  Reads like
the algorithm::

    for each digit of the bin index (DIGIT_BITS a pass, least significant first):
        bin_digits(keys -> digit_counts)          # per tile, written digit-major: no atomics
        scan(digit_counts -> digit_offsets)       # every (digit, tile) its first slot
        bin_scatter(keys, values -> sorted)       # ranks by a shared-memory match, stable
    bin_ranges(sorted keys -> counts, offsets)    # a binary search per bin

Counts without the order (``Binning.count``, a histogram) take one pass
without contention instead::

    bin_count(keys -> counts)          # a shared table per workgroup, then one global
                                       # atomic per (workgroup, non-empty bin); beyond
                                       # 2048 bins bin_count_hashed: a shared hash table
    scan(counts -> offsets)            # scan.py

One pass up to 256 bins, two up to 65536, three up to 2^24; the top digit
of fewer bits than DIGIT_BITS takes a pass over fewer digit slots
(``pass_digits``).  ``run`` may take a ``limit``, a 1x1 image the GPU wrote
(the tile lists' instance total): then only that many of the first ``count``
items are binned, without reading the number back.  Keys >= bins
are "no bin": not counted, and kept after every binned item (in item
order), so ``offsets[bins - 1] + counts[bins - 1]`` items are binned.
The radix sort (``sorting.RadixSort``) is the same digit passes over all 32
bits with the values carried along.  Element i of every image lives at texel
(i % width, i / width).

Its variants are shapes (counting modes, digit widths, tile sizes, an item limit), not features an effect asks
for.
"""

from __future__ import annotations

import dataclasses
from functools import cache

from ..seam.kernels import Constant, Image, Kernel, Plans, Shared
from .scan import Scan, linear_size

BIN_THREADS = 256
BIN_TILE = 2048  # items a workgroup ranks and scatters in shared memory (bin_scatter: 19.5 KiB of 32 KiB)
DIGIT_BITS = 8
DIGITS = 1 << DIGIT_BITS
DIGIT_SLOTS = DIGITS + 1  # the last: keys outside the bins
TABLE = 2048  # shared counters of bin_count: up to TABLE bins aggregated
COUNT_TILE = 4096  # items one bin_count workgroup counts
# bin_count_hashed, from TABLE bins up to HASHED_BINS: HASH_TILE items a workgroup of HASH_THREADS into a
# table of HASH_SLOTS key-and-count words (16 KiB); one global atomic per item beyond.  The sizes are the
# fastest of a sweep: bench/results/h100-2026-11-25-hashed-count-and-layout-prototypes.log.
HASH_THREADS = 1024
HASH_TILE = 65536
HASH_SLOTS = 4096
HASH_PROBES = 4
# Below HASHED_BINS (a count has 15 bits or more, room for HASH_THREADS adds above half).  At 2^20 bins
# with 1% hot the hot bins outnumber the slots (measured: bench/results/nvidia-h100-80gb-hbm3-pcie-sse2-2026-11-25-binning.json).
HASHED_BINS = 1 << 17
ALL_KEYS = -1  # ``bins`` of a radix sort: every key but 0xFFFFFFFF is a bin, and that one sorts last too

COUNT_MODES = ("AGGREGATED", "NAIVE", "WAVE_MATCH")
# The NVIDIA subgroup match the seed's wave path needs; Blender 5.2's create-info cannot enable
# extensions (its GL backend adds its own list, and a directive after them is rejected).
WAVE_MATCH_EXTENSIONS = ("GL_KHR_shader_subgroup_basic", "GL_KHR_shader_subgroup_ballot",
                         "GL_NV_shader_subgroup_partitioned")
_INCLUDES = ("common.glsl", "binning_common.glsl")
_COUNT_INCLUDES = (*_INCLUDES, "bin_counts.glsl")
_BIN_CONSTANTS = (Constant("INT", "count"), Constant("INT", "bins"))


@cache
def bin_count_kernel(mode: str = "AGGREGATED") -> Kernel:
    """Counts per bin; ``mode`` 'NAIVE' (one global atomic per item) and 'WAVE_MATCH' are benchmark peers."""
    if mode not in COUNT_MODES:
        raise ValueError(f"bin count mode must be one of {COUNT_MODES}, not {mode!r}")
    table = (Shared("uint", "s_table_counts", TABLE),)
    return Kernel(
        "bin_count",
        images=(Image("keys", "R32UI", "READ"), Image("counts", "R32UI", atomic=True)),
        constants=_BIN_CONSTANTS,
        shared=table if mode == "AGGREGATED" else (),
        local_size=(BIN_THREADS, 1, 1),
        includes=_COUNT_INCLUDES,
        defines=(("BIN_THREADS", str(BIN_THREADS)), ("BIN_TILE", str(COUNT_TILE)), ("BIN_TABLE", str(TABLE)),
                 *((("BIN_" + mode, "1"),) if mode != "AGGREGATED" else ())),
        extensions=WAVE_MATCH_EXTENSIONS if mode == "WAVE_MATCH" else (),
    )


@cache
def bin_count_hashed_kernel() -> Kernel:
    """Counts per bin in a shared hash table per workgroup, for TABLE < bins < HASHED_BINS."""
    return Kernel(
        "bin_count_hashed",
        images=(Image("keys", "R32UI", "READ"), Image("counts", "R32UI", atomic=True)),
        constants=_BIN_CONSTANTS,
        shared=(Shared("uint", "s_slots", HASH_SLOTS),),
        local_size=(HASH_THREADS, 1, 1),
        includes=_COUNT_INCLUDES,
        defines=(("BIN_THREADS", str(HASH_THREADS)), ("BIN_TILE", str(HASH_TILE)),
                 ("HASH_SLOTS", f"{HASH_SLOTS}u"), ("HASH_BITS", f"{HASH_SLOTS.bit_length() - 1}u"),
                 ("HASH_PROBES", str(HASH_PROBES))),
    )


def count_kernel(mode: str, bins: int) -> tuple[Kernel, int]:
    """The counting kernel of ``mode`` for ``bins`` bins and the items each of its workgroups counts."""
    if mode == "AGGREGATED" and TABLE < bins < HASHED_BINS:
        return bin_count_hashed_kernel(), HASH_TILE
    return bin_count_kernel(mode), COUNT_TILE


# Digits a pass may take: a bin index's top digit can be narrower than DIGIT_BITS (the 8160 tiles of
# 1080p: 8 bits, then 5), and a pass over fewer digit slots clears, scans and writes fewer counters.
PASS_DIGITS = (32, 64, 128, DIGITS)


def pass_digits(bins: int, shift: int) -> int:
    """The digits of the pass at ``shift`` over keys below ``bins``: the fewest of PASS_DIGITS holding them."""
    if bins == ALL_KEYS:
        return DIGITS
    top = 1 << max(max((bins - 1).bit_length(), 1) - shift, 0)
    return next(digits for digits in PASS_DIGITS if digits >= min(top, DIGITS))


def _digit_defines(tile: int, digits: int) -> tuple:
    slots = digits + 1  # the last: keys outside the bins
    return (("BIN_THREADS", str(BIN_THREADS)), ("BIN_TILE", str(tile)), ("BIN_DIGITS", str(digits)),
            ("BIN_SLOTS", str(slots)), ("BIN_SLOTS_PER_THREAD", str(-(-slots // BIN_THREADS))))


def _limited(kernel: Kernel, limited: bool) -> Kernel:
    """``kernel`` binning only the first item_limit items when ``limited`` (binning_common.glsl's BIN_LIMIT)."""
    if not limited:
        return kernel
    return dataclasses.replace(kernel, images=(*kernel.images, Image("item_limit", "R32UI", "READ")),
                               defines=(*kernel.defines, ("BIN_LIMIT", "1")))


def _limit_images(limit) -> dict:
    """The images a limited kernel binds for a ``limit`` (None: none, the kernel unlimited)."""
    return {"item_limit": limit} if limit is not None else {}


@cache
def bin_digits_kernel(tile: int = BIN_TILE, digits: int = DIGITS, limited: bool = False) -> Kernel:
    return _limited(Kernel(
        "bin_digits",
        images=(Image("keys", "R32UI", "READ"), Image("digit_counts", "R32UI", "WRITE")),
        constants=(*_BIN_CONSTANTS, Constant("INT", "shift")),
        shared=(Shared("uint", "s_hist", digits + 1),),
        local_size=(BIN_THREADS, 1, 1),
        includes=_INCLUDES,
        defines=_digit_defines(tile, digits),
    ), limited)


@cache
def bin_scatter_kernel(tile: int = BIN_TILE, digits: int = DIGITS, limited: bool = False) -> Kernel:
    slots = digits + 1
    return _limited(Kernel(
        "bin_scatter",
        images=(Image("keys", "R32UI", "READ"), Image("values", "R32UI", "READ"),
                Image("digit_offsets", "R32UI", "READ"),
                Image("sorted_keys", "R32UI", "WRITE"), Image("sorted_values", "R32UI", "WRITE")),
        constants=(*_BIN_CONSTANTS, Constant("INT", "shift"), Constant("INT", "index_values")),
        # Two sets of rank masks, then (the same words) the tile's keys and values in digit order.
        shared=(Shared("uint", "s_scratch", max(2 * slots * BIN_THREADS // 32, 2 * tile)),
                Shared("uint", "s_run", slots), Shared("uint", "s_start", slots),
                Shared("uint", "s_base", slots)),
        local_size=(BIN_THREADS, 1, 1),
        includes=_INCLUDES,
        defines=_digit_defines(tile, digits),
    ), limited)


@cache
def bin_ranges_kernel(limited: bool = False) -> Kernel:
    return _limited(Kernel(
        "bin_ranges",
        images=(Image("sorted_keys", "R32UI", "READ"), Image("counts", "R32UI", "WRITE"),
                Image("offsets", "R32UI", "WRITE"), Image("total", "R32UI", "WRITE")),
        constants=_BIN_CONSTANTS,
        local_size=(BIN_THREADS, 1, 1),
        includes=_INCLUDES,
        defines=(("BIN_THREADS", str(BIN_THREADS)), ("BIN_TILE", str(BIN_TILE))),
    ), limited)


BINNING_KERNELS = (bin_count_kernel(), bin_count_hashed_kernel(),
                   *(kernel(BIN_TILE, digits, limited) for digits in PASS_DIGITS
                     for kernel in (bin_digits_kernel, bin_scatter_kernel) for limited in (False, True)),
                   *(bin_ranges_kernel(limited) for limited in (False, True)))
MAX_GROUPS_X = 32768


def digit_shifts(bins: int) -> list[int]:
    """The shift of every digit pass for keys below ``bins`` (ALL_KEYS: four passes over 32 bits)."""
    if bins == ALL_KEYS:
        return list(range(0, 32, DIGIT_BITS))
    if bins < 1:
        raise ValueError(f"bins must be at least 1, not {bins}")
    bits = max((bins - 1).bit_length(), 1)
    return list(range(0, bits, DIGIT_BITS))


def tile_groups(count: int, tile: int) -> tuple[int, int, int]:
    """A 2D grid of one workgroup per tile (the kernels flatten y * x)."""
    groups = max(1, -(-count // tile))
    x = min(groups, MAX_GROUPS_X)
    return (x, -(-groups // x), 1)


class DigitPasses:
    """The stable LSD passes over (key, value) pairs of up to ``capacity`` items, and their scratch.

    ``run`` reads the input pairs (never writes them unless they are also the
    output, which needs an even number of passes) and leaves the pairs in
    key order in the output images.
    """

    def __init__(self, host, capacity: int, bins: int, tile: int = BIN_TILE, shifts=None):
        """``shifts``: the digits to sort by (default: every digit of the bins); the top ones alone
        sort by ``key >> shifts[0]``, a coarser order in fewer passes."""
        self.host, self.capacity, self.bins, self.tile = host, capacity, bins, tile
        self.shifts = list(shifts) if shifts is not None else digit_shifts(bins)
        self.tiles = max(1, -(-capacity // tile))
        matrix = linear_size(DIGIT_SLOTS * self.tiles, host.max_texture_size)
        self.digit_counts = host.texture("bin_digit_counts", *matrix, "R32UI")
        self.digit_offsets = host.texture("bin_digit_offsets", *matrix, "R32UI")
        self.scan = Scan(host, DIGIT_SLOTS * self.tiles)
        size = linear_size(capacity, host.max_texture_size)
        self.spare = (host.texture("bin_keys", *size, "R32UI"), host.texture("bin_values", *size, "R32UI"))
        self.digits = [pass_digits(bins, shift) for shift in self.shifts]
        self._plans = Plans()

    def run(self, keys, values, out_keys, out_values, count: int, limit=None) -> None:
        """Pairs (keys, values) -> (out_keys, out_values) in key order; ``values`` None: the item indices.

        ``values`` is shaped like ``keys``, and ``out_values`` like ``out_keys``.  ``limit``: a 1x1
        R32UI image; only the first min(count, limit) pairs are sorted (and written).
        """
        if count > self.capacity:
            raise ValueError(f"binning {count:,} items exceeds the capacity of {self.capacity:,}")
        if keys is out_keys and len(self.shifts) % 2:
            raise ValueError("binning in place needs an even number of digit passes")
        if count <= 0:
            return
        key = (id(keys), id(values), id(out_keys), id(out_values), count, id(limit))
        for count_digits, scan, scatter in self._plans.of(key, self._plan, keys, values, out_keys, out_values, count,
                                                          limit):
            self.host.dispatch(*count_digits)
            self.scan.run(*scan)
            self.host.dispatch(*scatter)

    def _plan(self, keys, values, out_keys, out_values, count: int, limit) -> tuple:
        """Each pass of ``run``: its bin_digits dispatch, its scan's arguments, its bin_scatter dispatch."""
        plan = []
        passes = len(self.shifts)
        tiles = -(-count // self.tile)
        groups = tile_groups(count, self.tile)
        source = (keys, values if values is not None else keys)
        limits = _limit_images(limit)
        for p, (shift, digits) in enumerate(zip(self.shifts, self.digits)):
            target = (out_keys, out_values) if (passes - 1 - p) % 2 == 0 else self.spare
            constants = {"count": count, "bins": self.bins, "shift": shift}
            plan.append((
                (bin_digits_kernel(self.tile, digits, bool(limits)), groups,
                 {"keys": source[0], "digit_counts": self.digit_counts, **limits}, constants),
                (self.digit_counts, self.digit_offsets, (digits + 1) * tiles),
                (bin_scatter_kernel(self.tile, digits, bool(limits)), groups,
                 {"keys": source[0], "values": source[1], "digit_offsets": self.digit_offsets,
                  "sorted_keys": target[0], "sorted_values": target[1], **limits},
                 {**constants, "index_values": int(p == 0 and values is None)}),
            ))
            source = target
        return tuple(plan)


class Binning:
    """Bins up to ``capacity`` items into ``bins`` bins.

    After ``run``: ``counts`` and ``offsets`` (``bins`` elements each),
    ``items`` (the item indices in bin order, stable) and ``keys`` (their
    bins, items outside the bins last).
    """

    def __init__(self, host, capacity: int, bins: int, tile: int = BIN_TILE):
        if bins < 1:
            raise ValueError(f"bins must be at least 1, not {bins}")
        self.host, self.capacity, self.bins = host, capacity, bins
        bin_size = linear_size(bins, host.max_texture_size)
        self.counts = host.texture("bin_counts", *bin_size, "R32UI")
        self.offsets = host.texture("bin_offsets", *bin_size, "R32UI")
        self.total = host.texture("bin_total", 1, 1, "R32UI")
        self.bin_scan = Scan(host, bins)
        size = linear_size(max(capacity, 1), host.max_texture_size)
        self.keys = host.texture("binned_keys", *size, "R32UI")
        self.items = host.texture("binned_items", *size, "R32UI")
        self.passes = DigitPasses(host, max(capacity, 1), bins, tile)

    def count(self, keys, count: int, mode: str = "AGGREGATED") -> None:
        """``counts`` and ``offsets`` (and ``total``: the items that have a bin) of the first ``count`` keys,
        without their order: a histogram."""
        self.host.clear(self.counts)
        self.add_counts(keys, count, mode)
        self.bin_scan.run(self.counts, self.offsets, self.bins, total=self.total)

    def add_counts(self, keys, count: int, mode: str = "AGGREGATED") -> None:
        """Add the first ``count`` keys' items to ``counts`` (one dispatch)."""
        if count > 0:
            kernel, tile = count_kernel(mode, self.bins)
            self.host.dispatch(kernel, tile_groups(count, tile), {"keys": keys, "counts": self.counts},
                               {"count": count, "bins": self.bins})

    def run(self, keys, count: int, values=None, limit=None) -> None:
        """Counts, offsets, and the items (or ``values``) of the first ``count`` keys in bin order
        (``limit``: a 1x1 R32UI image the GPU wrote; only the first min(count, limit) keys).

        The counts come from the sorted keys (``bin_ranges``: bins * log2(items) reads), not from a count
        pass over the items, its clear and its scan, which cost the viewport's tile binning ten times the
        searches (measured: bench/results/nvidia-h100-80gb-hbm3-pcie-sse2-2026-11-24-viewport-timeline.json).
        """
        self.passes.run(keys, values, self.keys, self.items, count, limit)
        if count <= 0:
            for image in (self.counts, self.offsets, self.total):
                self.host.clear(image)
            return
        limits = _limit_images(limit)
        self.host.dispatch(bin_ranges_kernel(bool(limits)), tile_groups(self.bins, BIN_THREADS),
                           {"sorted_keys": self.keys, "counts": self.counts, "offsets": self.offsets,
                            "total": self.total, **limits}, {"count": count, "bins": self.bins})
