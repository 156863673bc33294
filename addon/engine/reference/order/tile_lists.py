"""Reference of the tile lists (tile_lists.py, sprite_shape.glsl's rectangles and rows, sprite_instances.glsl,
tile_slices.glsl's runs and tile_combine.glsl's sum of them).

Every footprint's pixel and tile rectangles, the columns of each tile row its
capsule reaches (sprite_row_tiles), the tiles each item touches in list order,
their exclusive scan, the (tile, item) instances and their stable binning by
tile: all integers, which the GPU must match exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...order.tile_lists import TILE, TILE_CHUNK
from ...seam.records import SPRITE_SHAPE
from ..primitives import binning, scan

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


def reach_margin(center, stretch, radius) -> np.ndarray:
    """sprite_shape.glsl's reach_margin of (n, 2) centers and stretches and (n,) radii, float32."""
    size = (np.abs(center).max(axis=1) + np.abs(stretch).max(axis=1)) + radius
    return F(0.0625) + size * F(2.0**-20)


def row_tiles(shape, stretch, width, height, whole_rows=False):
    """sprite_row_tiles of every row of every footprint's tile rectangle: (items, rows, first, last), one entry
    a row, items ascending and each item's rows top down; a row's tile columns first..last (empty when last <
    first).  The same float32 operations in the same order (IEEE division: div_rn).  ``whole_rows``: the
    rectangle's (WHOLE_ROWS, the alpha sprites')."""
    rects = tile_rects(pixel_rects(shape, stretch, width, height))
    rows_each = np.maximum(rects[:, 3] - rects[:, 1] + 1, 0)
    items = np.repeat(np.arange(len(rects)), rows_each)
    rows = rects[items, 1] + np.arange(items.size) - np.repeat(np.cumsum(rows_each) - rows_each, rows_each)
    lanes = SPRITE_SHAPE.read(np.asarray(shape, F))
    center, radius, stretch = lanes["center"][items], lanes["radius"][items], np.asarray(stretch, F)[items]
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        reach = radius + reach_margin(center, stretch, radius)
        top = (rows * TILE).astype(F) + F(0.5)  # the row's first pixel centres
        tail, head = center - F(0.5) * stretch, center + F(0.5) * stretch
        y0 = np.fmax(np.fmin(tail[:, 1], head[:, 1]), top - reach)
        y1 = np.fmin(np.fmax(tail[:, 1], head[:, 1]), (top + F(TILE - 1)) + reach)
        rise = head[:, 1] - tail[:, 1]
        level = rise == 0
        slope = (head[:, 0] - tail[:, 0]) / np.where(level, F(1), rise)
        x0 = np.where(level, tail[:, 0], tail[:, 0] + (y0 - tail[:, 1]) * slope)
        x1 = np.where(level, head[:, 0], tail[:, 0] + (y1 - tail[:, 1]) * slope)
        left, right = np.fmin(x0, x1) - reach, np.fmax(x0, x1) + reach
        pixel_first = np.clip(np.ceil(left - F(0.5)), 0, width).astype(np.int64)
        pixel_last = np.clip(np.floor(right - F(0.5)), -1, width - 1).astype(np.int64)
    streak = ~(stretch == 0).all(axis=1) & (not whole_rows)  # a round footprint takes its rectangle's rows
    missed = streak & (y1 < y0)  # the path passes above or below the row
    clipped = streak & ~missed & (left <= right)  # else not finite: the rectangle's row
    missed |= clipped & (pixel_last < pixel_first)
    first = np.where(clipped, np.maximum(pixel_first // TILE, rects[items, 0]), rects[items, 0])
    last = np.where(clipped, np.minimum(pixel_last // TILE, rects[items, 2]), rects[items, 2])
    first[missed], last[missed] = 0, -1
    return items, rows, first, last


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


def tile_lists(shape, stretch, width, height, order=None, capacity=None, whole_rows=False) -> TileLists:
    """The lists of footprints ``shape`` and ``stretch`` over a width x height target, the j-th item being
    ``order[j]`` (the alpha sprites' depth order; default: item j), its tiles row by row (``whole_rows``: its
    rectangle's, as the alpha sprites'); ``capacity``: instances the lists hold (those past it dropped, as
    sprite_instances drops them)."""
    order = np.arange(len(shape)) if order is None else np.asarray(order, np.int64)
    tiles_x, tiles_y = -(-width // TILE), -(-height // TILE)
    item_tiles = [[np.zeros(0, np.int64)] for _ in range(len(shape))]  # each item's tiles, row by row
    for item, row, first, last in zip(*row_tiles(shape, stretch, width, height, whole_rows)):
        item_tiles[item].append(row * tiles_x + np.arange(first, last + 1))
    item_tiles = [np.concatenate(item_tiles[item]) for item in order]
    counts = np.array([len(tiles) for tiles in item_tiles], np.int64)
    tiles = np.concatenate([np.zeros(0, np.int64), *item_tiles])[:capacity].astype(np.uint32)
    items = np.repeat(order, counts)[:capacity]
    bins = tiles_x * tiles_y
    tile_counts = binning.counts(tiles, bins)
    return TileLists(counts.astype(np.uint32), scan.scan(counts), tiles, items.astype(np.uint32), tile_counts,
                     scan.scan(tile_counts), items[binning.order(tiles, bins)].astype(np.uint32))


def slice_runs(n: int, slices: int) -> list[tuple[int, int]]:
    """tile_slices.glsl: the entries [first, end) of a list of ``n`` that each slice that has any sums, in
    slice order: runs of whole chunks, the fewest that spread its chunks over ``slices``."""
    chunks = -(-n // TILE_CHUNK)
    length = -(-chunks // slices) * TILE_CHUNK
    return [(first, min(first + length, n)) for first in range(0, n, length)] if n else []


def combine(layer, partials, counts, slices: int) -> np.ndarray:
    """tile_combine.glsl: ``layer`` (height, width, 4) with the pixels of each tile with a list (``counts``, row
    by row) plus, in float32 and slice order, its used slices' ``partials`` (tiles, slices, 16, 16, 4); alpha
    kept."""
    out = np.array(layer, F)
    height, width = out.shape[:2]
    tiles_x = -(-width // TILE)
    for tile, n in enumerate(counts):
        y, x = tile // tiles_x * TILE, tile % tiles_x * TILE
        rows, columns = min(TILE, height - y), min(TILE, width - x)
        for k in range(len(slice_runs(int(n), slices))):
            out[y:y + rows, x:x + columns, :3] += partials[tile, k, :rows, :columns, :3].astype(F)
    return out
