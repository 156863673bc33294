"""OpenVDB files written with numpy: sparse half-float grids from 8^3 leaves, in bulk.

Why not the bundled ``openvdb`` module: its Python API fills a grid from dense arrays only (``copyFromArray``,
one call a run of leaves, ~43 us each plus the tree's own work), and ``write`` compresses with blosc; the smoke
preset's frames (7000 leaves, 1.6M active voxels, three grids) took 3 s a frame on each of 8 writers, 2.3 frames/s
(H200 record bench/results/nvidia-h200-pcie-sse2-2026-12-02-export.json).  A VDB file of leaves is a header, the
tree's topology (its node masks) and the leaves' buffers.  A bake's grids come from the GPU as the file stores
them (:class:`TreeGrid`: the leaves in the tree's order, their masks, bounds and buffers, light/volume_grids.py),
so a writer adds the header, metadata and topology only (a real smoke frame: ~0.7 ms of numpy and Python, ~8 ms
of SHA-1 for the UUID outside the GIL, on the CPU machine); dense leaves (:class:`FileGrid`) are put in tree
order by numpy in a few array operations (that frame: ~50 ms; openvdb's own writing 260).  ``openvdb`` reads the
files back (the tests) and Blender's Volume plays them (tests/output/test_volume_object.py renders one in
Cycles).

The layout is OpenVDB's file format 225 (io/Archive.cc): the header, the grid descriptors with each grid's
offsets, then per grid its compression flags (``COMPRESS_ACTIVE_MASK`` alone: inactive voxels are the
background, 0, so a leaf stores its active values only; no zip or blosc), its metadata (the keys openvdb
writes itself), a ``UniformScaleTranslateMap``, the 5-4-3 tree's topology (root, internal nodes of 32^3 and
16^3 children, leaf value masks) and the leaves' buffers (mask, a metadata byte, the active values as halves,
the precision Blender renders half-float grids at).  A voxel is active where any of its lanes is not 0 in the
values given (``copyFromArray``'s rule with a zero tolerance; float16 values: a float below half the smallest
half is 0 there, inactive).  The header's UUID is made from the rest of the file, so a
frame writes the same bytes on every run (a farm chunk's files equal a whole bake's).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAGIC = 0x56444220  # " BDV"
FILE_VERSION = 225
LIBRARY_VERSION = (13, 0)
UUID_OFFSET = 21  # after the magic (8), file version (4), library version (8), offsets flag (1)
UUID_LENGTH = 36
COMPRESS_ACTIVE_MASK = 0x2
NO_MASK_OR_INACTIVE_VALS = 0  # a node's metadata byte: its inactive values are all the background
LEAF_LOG2, LOWER_LOG2, UPPER_LOG2 = 3, 4, 5  # the 5-4-3 tree: children a side of leaves, lower and upper nodes
LEAF_VOXELS = 1 << 3 * LEAF_LOG2
TREE_TYPES = {1: "Tree_float_5_4_3_HalfFloat", 3: "Tree_vec3s_5_4_3_HalfFloat"}
_I32, _I64, _F64 = np.dtype("<i4"), np.dtype("<i8"), np.dtype("<f8")


@dataclass(frozen=True)
class TreeGrid:
    """One grid of a file as the file stores it: its leaves holding an active voxel in the tree's order
    (``_sort_by_tree``), their lowest voxels at VDB index ``origins`` (n, 3), their value ``masks`` (n, 64) uint8
    (byte x * 8 + y, bit z), their active voxel ``counts`` (n,), and ``buffers`` (uint8): each leaf's mask, a
    metadata byte (0) and its active voxels' halves (offset order, lanes adjacent), one after the other (the GPU
    makes them: light/volume_grids.py), ``bounds`` (2, 3) the lowest and highest active voxel (OpenVDB's empty box,
    max below min, with none); voxel (i, j, k) centered in the world at (ijk + 0.5) x ``voxel``; ``grid_class``
    as OpenVDB names it."""

    name: str
    origins: np.ndarray
    masks: np.ndarray
    counts: np.ndarray
    buffers: np.ndarray
    bounds: np.ndarray
    voxel: float
    lanes: int = 1
    grid_class: str = "unknown"


@dataclass(frozen=True)
class FileGrid:
    """One grid of a file as dense leaves: ``leaves`` (n, 8, 8, 8[, 3]) float16, or float32 (rounded to halves as
    numpy rounds), indexed [leaf, x, y, z], their lowest voxels at VDB index ``origins`` (n, 3) (any order, each a
    multiple of 8); the rest as :class:`TreeGrid`'s."""

    name: str
    leaves: np.ndarray
    origins: np.ndarray
    voxel: float
    lanes: int = 1
    grid_class: str = "unknown"

    def in_tree_order(self) -> TreeGrid:
        """The grid as the file stores it: the active voxels, the leaves holding any in the tree's order, their
        buffers (numpy's work on the CPU where the GPU's is not at hand)."""
        origins = np.asarray(self.origins, np.int64)
        if (origins % (1 << LEAF_LOG2)).any():
            raise ValueError(f"grid '{self.name}': a leaf's origin is not a multiple of {1 << LEAF_LOG2}")
        values = np.asarray(self.leaves).reshape(len(origins), LEAF_VOXELS, self.lanes)
        active = _active(values)
        leaf_masks = np.packbits(active, axis=1, bitorder="little")
        kept = np.flatnonzero(leaf_masks.any(axis=1))  # leaves holding nothing are not in the tree
        order = kept[_sort_by_tree(origins[kept])]
        masks = leaf_masks[order]
        counts = np.bitwise_count(masks).sum(axis=1, dtype=np.int64)  # active voxels a leaf
        return TreeGrid(self.name, origins[order], masks, counts, _buffers(values, active, order, masks, counts),
                        np.stack(_active_bounds(origins[order], masks)), self.voxel, self.lanes, self.grid_class)


def _string(text: str) -> bytes:
    data = text.encode()
    return len(data).to_bytes(4, "little") + data


def _metadata(entries: list[tuple[str, str, bytes]]) -> bytes:
    """A MetaMap: its entries sorted by name, as OpenVDB's std::map writes them."""
    return (len(entries).to_bytes(4, "little")
            + b"".join(_string(name) + _string(kind) + len(value).to_bytes(4, "little") + value
                       for name, kind, value in sorted(entries)))


def _transform(voxel: float) -> bytes:
    """A UniformScaleTranslateMap: voxel (0, 0, 0) centered at voxel / 2 (translation, scale, voxel size, the
    inverse scale, its square and half)."""
    rows = (voxel / 2, voxel, voxel, 1.0 / voxel, 1.0 / (voxel * voxel), 0.5 / voxel)
    return _string("UniformScaleTranslateMap") + np.repeat(np.asarray(rows, _F64), 3).tobytes()


def _sort_by_tree(origins: np.ndarray) -> np.ndarray:
    """The order a tree visits its leaves: by upper node (its origin's x, y, z), then child of the upper
    node, then child of the lower node (each by x, y, z: the mask's bit order); the nine keys in two numpy
    calls (each a wait for the GIL where writers contend)."""
    shifts = np.array([[LEAF_LOG2 + LOWER_LOG2 + UPPER_LOG2], [LEAF_LOG2 + LOWER_LOG2], [LEAF_LOG2]])
    digits = np.array([[-1], [(1 << UPPER_LOG2) - 1], [(1 << LOWER_LOG2) - 1]])  # the upper node's whole
    keys = (origins[:, None, :] >> shifts) & digits  # (leaves, level, axis)
    return np.lexsort(keys.reshape(len(origins), 9).T[::-1])


def _child_bits(origins: np.ndarray, child_log2: int, node_log2: int) -> np.ndarray:
    """Each origin's child index in its node (x slowest): the bit of the node's child mask."""
    local = (origins >> child_log2) & ((1 << node_log2) - 1)
    return (local[:, 0] << 2 * node_log2) | (local[:, 1] << node_log2) | local[:, 2]


def _masks(nodes: np.ndarray, bits: np.ndarray, count: int, node_log2: int) -> np.ndarray:
    """(count, mask bytes) child masks of ``count`` nodes: bit ``bits`` of node ``nodes`` set (all in a few numpy
    calls: a call a node held the GIL for the writer's whole topology)."""
    mask = np.zeros((count, 1 << 3 * node_log2), bool)
    mask[nodes, bits] = True
    return np.packbits(mask, axis=1, bitorder="little")


def _starts(nodes: np.ndarray) -> np.ndarray:
    """Whether each of (n, 3) sorted node coordinates differs from the one before (the first: True)."""
    step = nodes[1:] != nodes[:-1]
    return np.r_[True, step[:, 0] | step[:, 1] | step[:, 2]]  # not .any(axis=1): a slow reduce over 3


def _topology(origins: np.ndarray, leaf_masks: np.ndarray, background: bytes) -> bytes:
    """The tree's structure (root, upper and lower nodes, each leaf's value mask) of leaves in tree order."""
    if not len(origins):
        return (1).to_bytes(4, "little") + background + bytes(8)  # a buffer, no tiles, no children
    upper_shift = LEAF_LOG2 + LOWER_LOG2 + UPPER_LOG2
    lower_shift = LEAF_LOG2 + LOWER_LOG2
    node_empty = {log2: bytes(1 << 3 * log2 - 3) + bytes([NO_MASK_OR_INACTIVE_VALS])
                  for log2 in (UPPER_LOG2, LOWER_LOG2)}  # no active tile: an empty value mask, no values
    uppers, lowers = (np.flatnonzero(_starts(origins >> shift)) for shift in (upper_shift, lower_shift))
    lower_of_leaf = np.cumsum(_starts(origins >> lower_shift)) - 1
    upper_of_lower = np.searchsorted(uppers, lowers, side="right") - 1
    lower_masks = _masks(lower_of_leaf, _child_bits(origins, LEAF_LOG2, LOWER_LOG2), len(lowers), LOWER_LOG2)
    upper_masks = _masks(upper_of_lower, _child_bits(origins[lowers], lower_shift, UPPER_LOG2), len(uppers),
                         UPPER_LOG2)
    upper_origins = ((origins[uppers] >> upper_shift) << upper_shift).astype(_I32)
    leaf_stops = (*lowers[1:].tolist(), len(origins))
    parts = [(1).to_bytes(4, "little"), background, (0).to_bytes(4, "little"), len(uppers).to_bytes(4, "little")]
    lower_starts = (0, *np.searchsorted(lowers, uppers[1:]).tolist())
    for upper, (lower_start, lower_stop) in enumerate(zip(lower_starts, (*lower_starts[1:], len(lowers)))):
        parts += [upper_origins[upper].tobytes(), upper_masks[upper].tobytes(), node_empty[UPPER_LOG2]]
        for lower in range(lower_start, lower_stop):
            parts += [lower_masks[lower].tobytes(), node_empty[LOWER_LOG2],
                      leaf_masks[lowers[lower]:leaf_stops[lower]].tobytes()]
    return b"".join(parts)


def _active(values: np.ndarray) -> np.ndarray:
    """(leaves, 512) whether each voxel holds anything: a lane not +-0 (float16 or float32, by their bits: the
    lanes' bits or-ed, the sign shifted out; few numpy calls, each a wait for the GIL where threads contend)."""
    bits = values.view(f"<u{values.itemsize}")
    either = bits[..., 0]
    for lane in range(1, values.shape[-1]):
        either = either | bits[..., lane]
    return (either << 1) != 0


def _voxel_items(values: np.ndarray) -> np.ndarray:
    """(leaves x 512,) a voxel's lanes as halves in one item: a gather moves each voxel at once (a lane at a time
    took 3x longer); a view of the readback's halves, whose lanes are adjacent, else a copy."""
    halves = np.asarray(values, "<f2")
    if halves.strides[-1] != halves.itemsize and halves.shape[-1] > 1:
        halves = np.ascontiguousarray(halves)
    return halves.view(np.dtype((np.void, halves.itemsize * halves.shape[-1]))).reshape(-1)


def _buffers(values: np.ndarray, active: np.ndarray, order: np.ndarray, masks: np.ndarray, counts: np.ndarray
             ) -> np.ndarray:
    """The buffers of leaves ``order`` (indices into ``values``; their value ``masks`` and active voxel
    ``counts``), one after the other: each its value mask, a metadata byte (inactive values are the background)
    and its active values as halves (offset order)."""
    voxel = np.flatnonzero(active[order])  # in the leaves' new order, then in values: a leaf's place plus offset
    voxel &= LEAF_VOXELS - 1
    voxel += np.repeat(order * LEAF_VOXELS, counts)
    halves = _voxel_items(values)[voxel].view(np.uint8)
    headers = np.zeros((len(order), masks.shape[1] + 1), np.uint8)  # the mask, the metadata byte (0)
    headers[:, :-1] = masks
    sizes = headers.shape[1] + counts * 2 * values.shape[-1]
    at_header = ((np.cumsum(sizes) - sizes)[:, None] + np.arange(headers.shape[1])).ravel()
    is_value = np.ones(int(sizes.sum()), bool)  # interleaved by a mask, not a Python loop a leaf (the GIL's)
    is_value[at_header] = False
    data = np.empty(len(is_value), np.uint8)
    data[at_header] = headers.ravel()
    data[is_value] = halves
    return data


def _active_bounds(origins: np.ndarray, leaf_masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lowest and highest active voxel from the leaves' masks (byte x * 8 + y, bit z; openvdb's empty box,
    max below min, with none)."""
    if not len(origins):
        return np.full(3, 2**31 - 1), np.full(3, -2**31)
    edge = ((origins == origins.min(axis=0)) | (origins == origins.max(axis=0))).any(axis=1)
    origins, leaf_masks = origins[edge], leaf_masks[edge]  # a leaf a side further in holds no voxel further out
    rows = leaf_masks.reshape(-1, 8, 8) != 0
    seen = [rows.any(axis=2), rows.any(axis=1),  # (leaves, 8) along x, along y
            np.unpackbits(np.bitwise_or.reduce(leaf_masks, axis=1)[:, None], axis=1, bitorder="little") != 0]
    lowest = [(origins[:, axis] + seen[axis].argmax(axis=1)).min() for axis in range(3)]
    highest = [(origins[:, axis] + 7 - seen[axis][:, ::-1].argmax(axis=1)).max() for axis in range(3)]
    return np.asarray(lowest), np.asarray(highest)


def _grid_body(grid: TreeGrid) -> list:
    """A grid's part of the file after its descriptor: compression, metadata, transform, topology (then the
    block offset) and buffers, as [before the buffers, the buffers]."""
    origins = np.asarray(grid.origins, np.int64)
    metadata = _metadata([
        ("class", "string", grid.grid_class.encode()),
        ("file_bbox_min", "vec3i", np.asarray(grid.bounds[0], _I32).tobytes()),
        ("file_bbox_max", "vec3i", np.asarray(grid.bounds[1], _I32).tobytes()),
        ("file_compression", "string", b"active values"),
        ("file_mem_bytes", "int64", int(len(origins) * (LEAF_VOXELS * 4 * grid.lanes + 96)).to_bytes(8, "little")),
        ("file_voxel_count", "int64", int(grid.counts.sum(dtype=np.int64)).to_bytes(8, "little")),
        ("is_saved_as_half_float", "bool", b"\x01"),
        ("name", "string", grid.name.encode()),
    ])
    head = (COMPRESS_ACTIVE_MASK.to_bytes(4, "little") + metadata + _transform(grid.voxel)
            + _topology(origins, grid.masks, bytes(4 * grid.lanes)))
    return [head, grid.buffers]


def encode(grids: list[TreeGrid | FileGrid]) -> list:
    """The whole file as a list of parts (bytes and uint8 arrays) to write one after the other."""
    header = (MAGIC.to_bytes(8, "little") + FILE_VERSION.to_bytes(4, "little")
              + b"".join(n.to_bytes(4, "little") for n in LIBRARY_VERSION) + b"\x01" + bytes(UUID_LENGTH)
              + _metadata([]) + len(grids).to_bytes(4, "little"))
    parts, at = [bytearray(header)], len(header)
    for grid in grids:
        head, buffers = _grid_body(grid if isinstance(grid, TreeGrid) else grid.in_tree_order())
        descriptor = _string(grid.name) + _string(TREE_TYPES[grid.lanes]) + _string("")
        grid_at = at + len(descriptor) + 24
        block_at = grid_at + len(head)
        end = block_at + buffers.nbytes
        parts += [descriptor + np.asarray([grid_at, block_at, end], _I64).tobytes() + head, buffers]
        at = end
    digest = hashlib.sha1()
    for part in parts:
        digest.update(part)
    stamp = digest.hexdigest().upper()
    uuid = "-".join(stamp[a:b] for a, b in ((0, 8), (8, 12), (12, 16), (16, 20), (20, 32)))
    parts[0][UUID_OFFSET:UUID_OFFSET + UUID_LENGTH] = uuid.encode("ascii")
    return parts


def write(path: Path, parts: list) -> None:
    """The parts of :func:`encode` into ``path`` (OSError when the disk fills: the caller removes the file)."""
    with open(path, "wb") as file:
        for part in parts:
            file.write(part)
