"""The tiles a footprint is binned into (sprite_shape.glsl's sprite_row_tiles, through sprite_tile_count and
sprite_instances): GPU against reference/order/tile_lists.py, integer for integer, and both against brute force.

A footprint is a disc of ``radius`` swept along its streak (a capsule).  Every tile with a pixel centre nearer
the path than the radius (where every kernel's coverage ends: bokeh's disc_coverage, the sprites' Gaussian,
quad_falloff, footprint.glsl's reach_covers) must be listed, and no tile farther from the path than a row's
bound allows (sqrt 2 times the radius and reach_margin: the path clipped to the rows within those of a tile
row's pixel centres, then widened by them).  A round footprint keeps its whole rectangle, and so does every alpha
sprite (tile_lists.WHOLE_ROWS).
"""

import numpy as np
import pytest

from addon.engine.draw.sprites import SPRITE_TILE_COUNTS
from addon.engine.order.sorting import linear_groups
from addon.engine.order.tile_lists import TILE, FootprintList, KeptLists
from addon.engine.primitives.scan import linear_size
from addon.engine.reference.order.tile_lists import pixel_rects, reach_margin, tile_lists, tile_rects
from addon.engine.seam.kernels import Constant, Image
from addon.engine.seam.records import SPRITE_SHAPE
from tests.gpu_fill import InlineKernel, upload

WIDTH, HEIGHT = 100, 70  # 7 x 5 tiles, the last column and row overhanging the target
TILES_X, TILES_Y = -(-WIDTH // TILE), -(-HEIGHT // TILE)

TILE_COUNTS = InlineKernel(
    "tile_counts_for_test",
    images=(Image("sprite_shapes", "RGBA32F", "READ"), Image("sprite_streaks", "RGBA32F", "READ"),
            Image("instance_counts", "R32UI", "WRITE")),
    constants=(Constant("INT", "count"), Constant("IVEC2", "target_size")),
    includes=("common.glsl", "sprite_shape.glsl"),
    source="""
void main()
{
  int j = sprite_linear_index();
  if (j < count) {
    ivec2 texel = particle_texel(j, imageSize(sprite_shapes).x);
    int tiles = sprite_tile_count(load_sprite_shape(texel), imageLoad(sprite_streaks, texel).xy, target_size);
    imageStore(instance_counts, texel, uvec4(uint(tiles)));
  }
}
""",
)  # sprite_tile_count as the additive footprint kernels (bokeh_discs, quad_footprint) call it


def footprints(records):
    """SPRITE_SHAPE texels and (n, 2) streaks of (center, radius, stretch) records, depth 0.5."""
    shape = np.array([SPRITE_SHAPE.pack({"center": c, "radius": r, "depth": 0.5}) for c, r, _ in records], np.float32)
    return shape.reshape(-1, 4), np.array([s for _, _, s in records], np.float32).reshape(-1, 2)


def gpu_lists(host, shape, stretch, alpha=False):
    """What the GPU bins: (tiles per item, instance tiles, instance items, per-tile counts, binned items), the
    additive footprints' path (sprite_tile_count, scan, sprite_instances, binning) in list order; ``alpha``:
    the alpha sprites' (sprite_tile_counts and their sprite_instances, in the identity order)."""
    count = len(shape)
    items = FootprintList(host, count)
    width, rows = linear_size(count, host.max_texture_size)

    def texels(values):
        padded = np.zeros((width * rows, 4), np.float32)
        padded[:count, :values.shape[1]] = values
        return padded.reshape(rows, width, 4)

    order = {"depth_sprites": upload(host, "depth_sprites", np.arange(count))} if alpha else {}
    images = {**order, "sprite_shapes": host.texture("sprite_shapes", width, rows, "RGBA32F", texels(shape)),
              "sprite_streaks": host.texture("sprite_streaks", width, rows, "RGBA32F", texels(stretch))}
    host.dispatch(SPRITE_TILE_COUNTS if alpha else TILE_COUNTS, linear_groups(count),
                  {**images, "instance_counts": items.instance_counts}, {"count": count, "target_size": (WIDTH, HEIGHT)})
    kept = KeptLists(host, WIDTH, HEIGHT)
    items.scan.run(items.instance_counts, items.instance_offsets, count, total=kept.total)
    lists = kept.bin(images, items.instance_offsets, count, depth_order=alpha)
    total = int(host.read(kept.total)[0, 0])

    def linear(texture, n):
        return host.read(texture).reshape(-1)[:n]

    return (linear(items.instance_counts, count), linear(lists.tiles, total), linear(lists.sprites, total),
            linear(lists.binning.counts, TILES_X * TILES_Y), linear(lists.binning.items, total))


def path_distances(shape, stretch):
    """(items, tiles_y, tiles_x): float64 distance from each footprint's path to each tile's nearest pixel
    centre in the target, and to its nearest one (the last column and row of tiles overhang the target)."""
    lanes = SPRITE_SHAPE.read(shape)
    center, stretch = lanes["center"].astype(np.float64), stretch.astype(np.float64)
    y, x = np.mgrid[0:TILES_Y * TILE, 0:TILES_X * TILE] + 0.5
    inside = (x < WIDTH) & (y < HEIGHT)
    nearest_shown, nearest = [], []
    for c, s in zip(center, stretch):
        offset = np.stack([x - c[0], y - c[1]], axis=-1)
        length2 = s @ s
        along = np.clip(offset @ s / length2, -0.5, 0.5) if length2 > 0 else np.zeros(x.shape)
        distance = np.linalg.norm(offset - along[..., None] * s, axis=-1)
        per_tile = distance.reshape(TILES_Y, TILE, TILES_X, TILE).swapaxes(1, 2).reshape(TILES_Y, TILES_X, -1)
        shown = inside.reshape(TILES_Y, TILE, TILES_X, TILE).swapaxes(1, 2).reshape(TILES_Y, TILES_X, -1)
        nearest_shown.append(np.where(shown, per_tile, np.inf).min(axis=-1))
        nearest.append(per_tile.min(axis=-1))
    return np.array(nearest_shown), np.array(nearest)


def listed_tiles(lists, count):
    """(items, tiles_y, tiles_x) bool: the tiles each item is listed in."""
    listed = np.zeros((count, TILES_Y * TILES_X), bool)
    listed[lists.items, lists.tiles] = True
    return listed.reshape(count, TILES_Y, TILES_X)


def assert_lists_equal(got, want):
    """gpu_lists' arrays against the reference's TileLists, integer for integer."""
    for name, values in zip(("item_counts", "tiles", "items", "counts", "binned"), got):
        np.testing.assert_array_equal(values, getattr(want, name), err_msg=name)


def check(host, records):
    """GPU lists equal to the reference's; the reference's tiles hold every lit tile and no far one (but for
    a round footprint's rectangle)."""
    shape, stretch = footprints(records)
    want = tile_lists(shape, stretch, WIDTH, HEIGHT)
    assert_lists_equal(gpu_lists(host, shape, stretch), want)
    listed = listed_tiles(want, len(shape))
    shown, nearest = path_distances(shape, stretch)
    lanes = SPRITE_SHAPE.read(shape)
    radius = lanes["radius"].astype(np.float64)[:, None, None]
    reach = radius + reach_margin(lanes["center"], stretch, lanes["radius"])[:, None, None]
    assert not ((shown < radius) & ~listed).any(), "a tile with a lit pixel centre is left out"
    far = (nearest > np.sqrt(2.0) * reach) & (stretch != 0).any(axis=1)[:, None, None]  # round: the rectangle
    assert not (listed & far).any(), "a tile beyond the reach is listed"
    return want, listed


def rectangle_areas(records):
    """Tiles in each footprint's rectangle (sprite_tile_rect): what it was binned into before its rows."""
    rects = tile_rects(pixel_rects(*footprints(records), WIDTH, HEIGHT))
    return np.maximum(rects[:, 2] - rects[:, 0] + 1, 0) * np.maximum(rects[:, 3] - rects[:, 1] + 1, 0)


def test_diagonal_streaks(host, rng):
    """Streaks at every angle, some off the target's edges: listed where lit, most of the rectangle skipped."""
    n = 80
    records = [(c, r, s) for c, r, s in zip(rng.uniform(-20.0, (WIDTH + 20.0, HEIGHT + 20.0), (n, 2)),
                                            rng.uniform(0.5, 6.0, n), rng.normal(0.0, 40.0, (n, 2)))]
    records.append(((50.0, 35.0), 2.0, (60.0, 60.0)))  # a 45 degree streak across 5 x 5 tiles
    want, _ = check(host, records)
    assert want.item_counts.sum() < 0.8 * rectangle_areas(records).sum()
    assert want.item_counts[-1] == 13  # the diagonal and its neighbours of 25


def test_round_discs_keep_their_rectangle(host, rng):
    n = 40
    records = [(c, r, (0.0, 0.0)) for c, r in zip(rng.uniform(-20.0, (WIDTH + 20.0, HEIGHT + 20.0), (n, 2)),
                                                  rng.uniform(0.5, 40.0, n))]
    want, _ = check(host, records)
    np.testing.assert_array_equal(want.item_counts, rectangle_areas(records))


def test_alpha_sprites_keep_their_rectangle(host, rng):
    """Streaks too: the alpha sprites' walk would see its chunks move (tile_lists.WHOLE_ROWS)."""
    n = 40
    records = [(c, r, s) for c, r, s in zip(rng.uniform(-20.0, (WIDTH + 20.0, HEIGHT + 20.0), (n, 2)),
                                            rng.uniform(0.5, 6.0, n), rng.normal(0.0, 40.0, (n, 2)))]
    shape, stretch = footprints(records)
    want = tile_lists(shape, stretch, WIDTH, HEIGHT, whole_rows=True)
    assert_lists_equal(gpu_lists(host, shape, stretch, alpha=True), want)
    np.testing.assert_array_equal(want.item_counts, rectangle_areas(records))


@pytest.mark.parametrize("stretch", [(70.0, 0.0), (0.0, -50.0), (70.0, 1e-3), (1e-4, 0.0), (-3e-5, 2e-5)])
def test_level_upright_and_tiny_streaks(host, stretch):
    """Along an axis (a level path: no division), nearly so (a huge slope), and almost a point."""
    records = [((x, y), r, stretch) for x, y, r in [(50.0, 35.0, 1.5), (15.9, 16.1, 3.0), (8.0, 63.5, 0.7),
                                                    (99.5, 0.5, 9.0), (32.0, 48.0, 0.5)]]
    check(host, records)


def test_zero_radius_and_off_screen(host):
    """No radius, or far outside the target: no tile; no int overflow on the way."""
    records = [((50.0, 35.0), 0.0, (30.0, 10.0)), ((-1e9, 35.0), 5.0, (40.0, 40.0)),
               ((50.0, 3e9), 5.0, (10.0, 1e3)), ((1e30, -1e30), 1e3, (-1e3, 1e3)), ((150.0, 35.0), 2.0, (0.0, 0.0))]
    want, _ = check(host, records)
    assert not want.item_counts.any()


def test_huge_footprints_clamped(host):
    """Paths from far off the target across it (their ends clamped), and a radius past the whole target."""
    records = [((5e6, 30.0), 2.0, (1e7, 20.0)),  # from (0, 20) far to the right, almost level
               ((40.0, -3e6), 3.0, (30.0, 6e6)),  # from far above to far below, almost upright
               ((-2e5, -1.5e5), 1.0, (4e5, 3e5)),  # a diagonal through the middle, ends far off both ways
               ((50.0, 35.0), 1e6, (10.0, 10.0))]  # covers everything
    want, listed = check(host, records)
    assert listed[3].all()
    assert 0 < want.item_counts[2] < TILES_X * TILES_Y
