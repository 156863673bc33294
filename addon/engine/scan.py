"""Hierarchical block scan (prefix sum) of uint32 values in R32UI images.

Reads like the algorithm::

    scan_block(values  -> out,       sums[0])   # every block of 512 scanned, its total kept
    scan_block(sums[0] -> offsets[0], sums[1])  # the block totals scanned the same way
    ...                                         # until one block holds everything
    scan_add(offsets[k] -> offsets[k-1])        # then each level's offsets added back down
    scan_add(offsets[0] -> out)

One block holds 512 elements, so three levels reach 512^3 (134M) elements and
a fourth goes beyond.  The single block of the top level writes the grand
total, so a caller that passes ``total`` (a 1x1 R32UI image) gets the count of
a compaction on the GPU without reading anything back.  Element i of every
image lives at texel (i % width, i / width); sums wrap around modulo 2^32.
"""

from __future__ import annotations

from .kernels import Constant, Image, Kernel, Shared

SCAN_THREADS = 256
SCAN_BLOCK = 2 * SCAN_THREADS
_DEFINES = (("SCAN_THREADS", str(SCAN_THREADS)), ("SCAN_BLOCK", str(SCAN_BLOCK)))

SCAN_BLOCK_KERNEL = Kernel(
    "scan_block",
    images=(Image("scan_in", "R32UI", "READ"), Image("scan_out", "R32UI", "WRITE"), Image("block_sums", "R32UI", "WRITE")),
    constants=(Constant("INT", "count"), Constant("INT", "inclusive")),
    shared=(Shared("uint", "pair_sums", SCAN_THREADS),),
    local_size=(SCAN_THREADS, 1, 1),
    defines=_DEFINES,
)

SCAN_ADD = Kernel(
    "scan_add",
    images=(Image("block_offsets", "R32UI", "READ"), Image("scan_out", "R32UI")),
    constants=(Constant("INT", "count"),),
    local_size=(SCAN_THREADS, 1, 1),
    defines=_DEFINES,
)

SCAN_KERNELS = (SCAN_BLOCK_KERNEL, SCAN_ADD)


def blocks(count: int) -> int:
    return -(-count // SCAN_BLOCK)


def level_counts(count: int) -> list[int]:
    """Element counts per level: the input, then block totals until one block is left."""
    counts = [count]
    while counts[-1] > SCAN_BLOCK:
        counts.append(blocks(counts[-1]))
    return counts


def linear_size(count: int, max_texture_size: int) -> tuple[int, int]:
    """Width and rows of an image holding ``count`` elements in row-major order."""
    width = min(max(count, 1), max_texture_size)
    rows = -(-max(count, 1) // width)
    if rows > max_texture_size:
        raise ValueError(f"{count:,} elements do not fit a {max_texture_size}^2 image")
    return width, rows


def block_groups(count: int, max_groups: int) -> tuple[int, int, int]:
    """A 2D grid of one workgroup per block (at most ``max_groups`` per dimension)."""
    n = max(blocks(count), 1)
    x = min(n, max_groups)
    return (x, -(-n // x), 1)


class Scan:
    """Scratch images for scanning up to ``capacity`` elements, and the recording."""

    def __init__(self, host, capacity: int):
        self.host = host
        self.capacity = capacity
        self.max_groups = min(host.max_work_group_count, 65535)
        self.unwanted_total = host.texture("scan_total", 1, 1, "R32UI")
        self.scratch = []
        for count in level_counts(max(capacity, 1))[1:]:
            size = linear_size(count, host.max_texture_size)
            self.scratch.append((host.texture("scan_sums", *size, "R32UI"), host.texture("scan_offsets", *size, "R32UI")))

    def run(self, values, out, count: int, inclusive: bool = False, total=None) -> None:
        """Scan the first ``count`` elements of ``values`` into ``out``; the sum into ``total``.

        ``values`` and ``out`` may be any R32UI images holding ``count`` elements.
        """
        if count > self.capacity:
            raise ValueError(f"scan of {count:,} elements exceeds its capacity of {self.capacity:,}")
        if count <= 0:
            if total is not None:
                self.host.clear(total)  # the sum of nothing
            return
        counts = level_counts(count)
        top = len(counts) - 1
        # Up: scan each level's blocks, writing their totals one level up.
        sources, targets = [values], [out]
        for level, n in enumerate(counts):
            sums = self.scratch[level][0] if level < top else total if total is not None else self.unwanted_total
            self._scan_block(sources[-1], targets[-1], sums, n, inclusive if level == 0 else False)
            if level < top:
                sources.append(self.scratch[level][0])
                targets.append(self.scratch[level][1])
        # Down: add each level's block offsets into the level below.
        for level in reversed(range(top)):
            self.host.dispatch(
                SCAN_ADD, block_groups(counts[level], self.max_groups),
                {"block_offsets": targets[level + 1], "scan_out": targets[level]}, {"count": counts[level]},
            )

    def _scan_block(self, values, out, sums, count, inclusive):
        self.host.dispatch(
            SCAN_BLOCK_KERNEL, block_groups(count, self.max_groups),
            {"scan_in": values, "scan_out": out, "block_sums": sums},
            {"count": count, "inclusive": int(inclusive)},
        )
