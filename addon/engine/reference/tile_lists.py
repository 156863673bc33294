"""Reference of the tile lists (tile_lists.py, sprite_shape.glsl's rectangles, sprite_instances.glsl).

Every footprint's pixel and tile rectangles, the tiles each item touches in
list order, their exclusive scan, the (tile, item) instances and their stable
binning by tile: all integers, which the GPU must match exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..records import SPRITE_SHAPE
from ..tile_lists import TILE
from . import binning, scan

F = np.float32
EMPTY = (0, 0, -1, -1)  # sprite_pixel_rect's empty rectangle


def pixel_rects(shape, stretch, width, height) -> np.ndarray:
    """sprite_pixel_rect: (n, 4) first and last pixel x, y whose centers each footprint (``shape``: records.
    SPRITE_SHAPE texels, ``stretch`` (n, 2)) may cover; EMPTY for one without a radius."""
    shape = SPRITE_SHAPE.read(np.asarray(shape, F))
    radius = shape["radius"]
    with np.errstate(invalid="ignore", over="ignore"):
        reach = np.abs(np.asarray(stretch, F)) * F(0.5) + radius[:, None]
        low = np.floor(shape["center"] - reach - F(0.5))
        high = np.floor(shape["center"] + reach - F(0.5)) + F(1)
    size = np.array([width, height], F)
    rects = np.column_stack([np.clip(low, 0, size), np.clip(high, -1, size - 1)]).astype(np.int64)
    rects[~(radius > 0)] = EMPTY
    return rects


def tile_rects(pixel_rects) -> np.ndarray:
    """sprite_tile_rect: (n, 4) first and last tile x, y under each pixel rectangle; EMPTY for an empty one."""
    tiles = pixel_rects // TILE
    empty = (pixel_rects[:, 2] < pixel_rects[:, 0]) | (pixel_rects[:, 3] < pixel_rects[:, 1])
    tiles[empty] = EMPTY
    return tiles


@dataclass(frozen=True)
class TileLists:
    """What the tile lists hold after binning: per item in list order, per instance, per tile."""

    item_counts: np.ndarray  # (count,) uint32: tiles the j-th item touches (sprite_tile_counts)
    item_offsets: np.ndarray  # (count,) uint32: their exclusive scan, the j-th item's first instance
    tiles: np.ndarray  # (instances,) uint32: the tile of every instance (sprite_instances)
    items: np.ndarray  # (instances,) uint32: the item of every instance
    counts: np.ndarray  # (tiles,) uint32: instances per tile (the binning's counts)
    offsets: np.ndarray  # (tiles,) uint32: each tile's first instance in ``binned`` (the binning's offsets)
    binned: np.ndarray  # (instances,) uint32: the items tile by tile, in list order within a tile

    def tile_list(self, tile: int) -> np.ndarray:
        """The items of one tile, in list order."""
        first = int(self.offsets[tile])
        return self.binned[first:first + int(self.counts[tile])]


def tile_lists(shape, stretch, width, height, order=None, capacity=None) -> TileLists:
    """The lists of footprints ``shape`` and ``stretch`` over a width x height target, the j-th item being
    ``order[j]`` (the alpha sprites' depth order; default: item j), its tiles row by row; ``capacity``:
    instances the lists hold (those past it dropped, as sprite_instances drops them)."""
    order = np.arange(len(shape)) if order is None else np.asarray(order, np.int64)
    tiles_x, tiles_y = -(-width // TILE), -(-height // TILE)
    rects = tile_rects(pixel_rects(shape, stretch, width, height))[order]
    counts = (np.maximum(rects[:, 2] - rects[:, 0] + 1, 0) * np.maximum(rects[:, 3] - rects[:, 1] + 1, 0))
    tiles, items = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for item, (x0, y0, x1, y1) in zip(order, rects):
        ty, tx = np.mgrid[y0:y1 + 1, x0:x1 + 1]
        tiles.append((ty * tiles_x + tx).ravel())
        items.append(np.full(tiles[-1].size, item))
    tiles, items = np.concatenate(tiles)[:capacity].astype(np.uint32), np.concatenate(items)[:capacity]
    bins = tiles_x * tiles_y
    tile_counts = binning.counts(tiles, bins)
    return TileLists(counts.astype(np.uint32), scan.scan(counts), tiles, items.astype(np.uint32), tile_counts,
                     scan.scan(tile_counts), items[binning.order(tiles, bins)].astype(np.uint32))
