"""Hierarchical block scan (prefix sum) of uint32 values in R32UI images.

Reduce, then scan; reads like the algorithm::

    scan_reduce(values  -> sums[0])             # every block of 512 summed
    scan_reduce(sums[0] -> sums[1])             # the block totals summed the same way
    ...                                         # until one block holds everything (sums[k-1])
    scan_block(sums[k-2] -> offsets[k-2], + the sums[k-1] before)   # each block adds up the top block's
                                                                    # totals before it (the last: the grand total)
    scan_block(sums[k-3] -> offsets[k-3], + offsets[k-2])   # each level scanned again,
    ...                                                     # plus its block's offset
    scan_block(values -> out, + offsets[0])     # (one block of values: this alone, with the grand total)

The input is read twice and the output written once (3 passes over the data,
where scan-then-add needs 4).  The top block is not scanned by a dispatch of its
own: one workgroup's dispatch costs a big GPU more idle than its work (the level
below reads and sums at most SCAN_BLOCK totals a block).  One block holds 512
elements (128 threads of ``SCAN_RUN`` = 4, loaded and stored in coalesced rounds), so two levels reach 512^2 (256K)
elements, three 128M and four 64G.  A scan whose capacity needs one level fewer with
``LONG_RUN`` (2048-element blocks: two levels reach 4M) takes those: two dispatches fewer,
which is what a scan of up to a few million elements costs most.
The last block under the top (or the only block) writes the grand total, so a caller that
passes ``total`` (a 1x1 R32UI image) gets the count of a compaction on the
GPU without reading anything back.  Element i of every image lives at texel
(i % width, i / width); sums wrap around modulo 2^32.

Its variants are shapes (elements a thread scans), not features an effect asks for.
"""

from __future__ import annotations

from functools import cache

from ..seam.kernels import Constant, Image, Kernel, Plans, Shared

SCAN_THREADS = 128
# Elements per thread (a block is SCAN_RUN * SCAN_THREADS), chosen by measurement on the GPU:
# bench/results/nvidia-h100-80gb-hbm3-pcie-sse2-2026-11-23-scan.json (LONG_RUN's 16 pays on llvmpipe only, where fewer
# workgroups and barriers matter most).
SCAN_RUN = 4
LONG_RUN = 16
SCAN_BLOCK = SCAN_RUN * SCAN_THREADS
_INCLUDES = ("common.glsl", "scan_common.glsl")


@cache
def scan_kernels(run: int = SCAN_RUN) -> tuple[Kernel, Kernel]:
    """(scan_reduce, scan_block) for blocks of ``run`` elements per thread."""
    block = run * SCAN_THREADS
    defines = (("SCAN_THREADS", str(SCAN_THREADS)), ("SCAN_RUN", str(run)), ("SCAN_BLOCK", str(block)))
    sums = Shared("uint", "thread_sums", SCAN_THREADS)
    reduce = Kernel(
        "scan_reduce",
        images=(Image("scan_in", "R32UI", "READ"), Image("block_sums", "R32UI", "WRITE")),
        constants=(Constant("INT", "count"),),
        shared=(sums,),
        local_size=(SCAN_THREADS, 1, 1),
        includes=_INCLUDES,
        defines=defines,
    )
    scan_block = Kernel(
        "scan_block",
        images=(Image("scan_in", "R32UI", "READ"), Image("scan_out", "R32UI", "WRITE"),
                Image("block_offsets", "R32UI", "READ"), Image("scan_total", "R32UI", "WRITE")),
        # top: one block, no offsets; summed_offsets: block_offsets holds the (one block of) totals above
        constants=(Constant("INT", "count"), Constant("INT", "inclusive"), Constant("INT", "top"),
                   Constant("INT", "summed_offsets")),
        shared=(sums, Shared("uint", "block_values", block + block // 32)),  # padded: no bank conflicts
        local_size=(SCAN_THREADS, 1, 1),
        includes=_INCLUDES,
        defines=defines,
    )
    return reduce, scan_block


SCAN_KERNELS = (*scan_kernels(), *scan_kernels(LONG_RUN))


def blocks(count: int, block: int = SCAN_BLOCK) -> int:
    return -(-count // block)


def level_counts(count: int, block: int = SCAN_BLOCK) -> list[int]:
    """Element counts per level: the input, then block totals until one block is left."""
    counts = [count]
    while counts[-1] > block:
        counts.append(blocks(counts[-1], block))
    return counts


def fewest_levels_run(capacity: int) -> int:
    """SCAN_RUN, or LONG_RUN where its longer blocks scan ``capacity`` elements in fewer levels."""
    short = len(level_counts(max(capacity, 1), SCAN_RUN * SCAN_THREADS))
    long = len(level_counts(max(capacity, 1), LONG_RUN * SCAN_THREADS))
    return LONG_RUN if long < short else SCAN_RUN


def linear_size(count: int, max_texture_size: int) -> tuple[int, int]:
    """Width and rows of an image holding ``count`` elements in row-major order."""
    width = min(max(count, 1), max_texture_size)
    rows = -(-max(count, 1) // width)
    if rows > max_texture_size:
        raise ValueError(f"{count:,} elements do not fit a {max_texture_size}^2 image")
    return width, rows


def block_groups(count: int, max_groups: int, block: int = SCAN_BLOCK) -> tuple[int, int, int]:
    """A 2D grid of one workgroup per block (at most ``max_groups`` per dimension)."""
    n = max(blocks(count, block), 1)
    x = min(n, max_groups)
    return (x, -(-n // x), 1)


class Scan:
    """Scratch images for scanning up to ``capacity`` elements, and the recording."""

    def __init__(self, host, capacity: int, run: int | None = None):
        """``run``: elements a thread (default: ``fewest_levels_run(capacity)``)."""
        self.host = host
        self.capacity = capacity
        run = fewest_levels_run(capacity) if run is None else run
        self.block = run * SCAN_THREADS
        self.reduce_kernel, self.block_kernel = scan_kernels(run)
        self.max_groups = min(host.max_work_group_count, 65535)
        self.unwanted_total = host.texture("scan_total", 1, 1, "R32UI")
        sizes = [linear_size(count, host.max_texture_size) for count in level_counts(max(capacity, 1), self.block)[1:]]
        self.sums = [host.texture("scan_sums", *size, "R32UI") for size in sizes]
        self.offsets = [host.texture("scan_offsets", *size, "R32UI") for size in sizes[:-1]]  # the top: summed
        self._plans = Plans()

    def run(self, values, out, count: int, inclusive: bool = False, total=None) -> None:
        """Scan the first ``count`` elements of ``values`` into ``out``; the sum into ``total``.

        ``values`` and ``out`` may be any R32UI images holding ``count`` elements
        (the same image too: every thread writes only the elements it read).
        """
        if count > self.capacity:
            raise ValueError(f"scan of {count:,} elements exceeds its capacity of {self.capacity:,}")
        if count <= 0:
            if total is not None:
                self.host.clear(total)  # the sum of nothing
            return
        key = (id(values), id(out), count, inclusive, id(total))
        for dispatch in self._plans.of(key, self._plan, values, out, count, inclusive, total):
            self.host.dispatch(*dispatch)

    def _plan(self, values, out, count: int, inclusive: bool, total) -> tuple:
        """The dispatches of ``run``, as (kernel, groups, textures, constants)."""
        plan = []
        counts = level_counts(count, self.block)
        top = len(counts) - 1
        sources, targets = [values, *self.sums[:top]], [out, *self.offsets[:max(top - 1, 0)]]
        # Up: each level's block totals, one level up, until one block holds everything.
        for level in range(top):
            plan.append((self.reduce_kernel, block_groups(counts[level], self.max_groups, self.block),
                         {"scan_in": sources[level], "block_sums": sources[level + 1]}, {"count": counts[level]}))
        # Down: every level below the top plus its block's offset; the top's totals summed, not scanned.
        total = total if total is not None else self.unwanted_total
        for level in reversed(range(max(top, 1))):
            summed = level == top - 1
            above = sources[level + 1] if summed else targets[level + 1] if top else out  # (top: not read)
            plan.append((
                self.block_kernel, block_groups(counts[level], self.max_groups, self.block),
                {"scan_in": sources[level], "scan_out": targets[level], "block_offsets": above, "scan_total": total},
                {"count": counts[level], "inclusive": int(inclusive and level == 0), "top": int(top == 0),
                 "summed_offsets": int(summed)},
            ))
        return tuple(plan)
