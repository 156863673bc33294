"""numpy reference of the trails (addon/engine/simulate/trails.py): the ring buffer's record (trail_record.glsl, in the
kernel's float32 order: bit for bit), the ribbons' geometry (trail_ribbons.glsl: where each segment lies on
screen, how wide, in what color; the tests compare the drawn pixels within the rasterizer's rounding) and the
pixels the tiles add of each segment (trail_tiles.py: trail_footprint.glsl and trail_accumulate.glsl, in float64)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...look.look import look_table, particle_look, variation
from ...seam.records import PARTICLE
from ...seam.tables import SIZES
from ..seam.state import alive

F = np.float32


@dataclass
class Rings:
    """Every slot's ring, in slot order: points (n, K, 4) and heads (n, 4), as trails.TrailBuffer holds them."""

    points: np.ndarray
    heads: np.ndarray

    @classmethod
    def empty(cls, count: int, points: int) -> Rings:
        return cls(np.zeros((count, points, 4), F), np.zeros((count, 4), F))

    @classmethod
    def from_textures(cls, points: np.ndarray, heads: np.ndarray, count: int, length: int, tiles_x: int) -> Rings:
        """From the GPU's (ring, heads) textures (rows, width, 4): point j of slot i at its state texel plus
        (j % tiles_x, j // tiles_x) state sizes (trail.glsl)."""
        rows, width = heads.shape[:2]
        slot = np.arange(count)
        x, y = slot % width, slot // width
        ring = np.stack([points[y + (j // tiles_x) * rows, x + (j % tiles_x) * width] for j in range(length)], axis=1)
        return cls(ring.astype(F), heads.reshape(-1, 4)[:count].astype(F))

    def newest_first(self, slot: int) -> np.ndarray:
        """Slot's filled points, newest first, (filled, 3)."""
        newest, filled = int(self.heads[slot, 0]), int(self.heads[slot, 1])
        length = self.points.shape[1]
        return self.points[slot, [(newest - m) % length for m in range(filled)], :3]


def record(rings: Rings, pos_age: np.ndarray, vel_life: np.ndarray, origin, spacing: float) -> None:
    """One trail_record dispatch over (n, 4) states as stored (positions relative to ``origin``); ``spacing``:
    trail_spacing (0: a point every step).  Updates ``rings`` in place."""
    pos_age, vel_life = np.asarray(pos_age, F), np.asarray(vel_life, F)
    length = rings.points.shape[1]
    slot = np.arange(len(pos_age))
    particle = PARTICLE.read_images(pos_age, vel_life)
    position = particle["position"] + np.asarray(origin, F)[:3]
    age = particle["age"]
    live = alive(np.column_stack([position, age]), vel_life)
    newest, filled = rings.heads[:, 0].astype(np.int64), rings.heads[:, 1].astype(np.int64)
    born = live & ((filled == 0) | (age < rings.heads[:, 2]))
    birth = position - particle["velocity"] * age[:, None]
    newest[born], filled[born] = 0, 1
    rings.points[born, 0] = np.column_stack([birth[born], np.zeros(born.sum(), F)])
    last = np.where(born[:, None], birth, rings.points[slot, newest, :3])
    moved = position - last
    moved2 = moved[:, 0] * moved[:, 0] + moved[:, 1] * moved[:, 1] + moved[:, 2] * moved[:, 2]
    advance = live & ((F(spacing) <= 0) | (moved2 >= F(spacing) * F(spacing)))
    newest = np.where(advance, (newest + 1) % length, newest)
    filled = np.where(advance, np.minimum(filled + 1, length), filled)
    rings.points[slot[advance], newest[advance]] = np.column_stack([position[advance], np.zeros(advance.sum(), F)])
    rings.heads[:] = np.where(live[:, None], np.column_stack([newest, filled, age, np.zeros_like(age)]), 0).astype(F)


@dataclass
class Segment:
    """One ribbon segment on screen: pixel ends, half widths in pixels and colors at each end."""

    ends: np.ndarray  # (2, 2)
    half_px: np.ndarray  # (2,)
    colors: np.ndarray  # (2, 3)
    world: np.ndarray  # (2, 3): the ends' world positions
    depths: np.ndarray  # (2,): the ends' window depths (0 near .. 1 far)


def ribbon_segments(settings, rings: Rings, pos_age, vel_life, view_proj, width: int, height: int,
                    pixels_per_unit: float, ramp=None) -> list[Segment]:
    """The segments trail_ribbons.glsl draws for (n, 4) world-space states (no shutter), in float64."""
    pos_age, vel_life = np.asarray(pos_age, np.float64), np.asarray(vel_life, np.float64)
    view_proj = np.asarray(view_proj, np.float64)
    table = look_table(settings, ramp)
    live, particle = alive(pos_age, vel_life), PARTICLE.read_images(pos_age, vel_life)
    segments = []
    for slot in np.flatnonzero(live):
        t_life = F(particle["age"][slot] / particle["life"][slot])
        look = particle_look(table, np.array([t_life], F), particle["velocity"][slot:slot + 1].astype(F),
                             settings)[0].astype(np.float64)
        radius = settings.size * look[3] * float(variation(slot, settings.size_random, settings.seed, "SIZE"))
        brightness = settings.emission_strength * float(variation(slot, settings.color_random, settings.seed,
                                                                  "BRIGHTNESS"))
        points = np.vstack([particle["position"][slot], rings.newest_first(slot)]).astype(np.float64)
        clip = np.column_stack([points, np.ones(len(points))]) @ view_proj.T
        screen = (clip[:, :2] / clip[:, 3:] * 0.5 + 0.5) * (width, height)
        t = np.arange(len(points)) / settings.trail_points
        half = radius * pixels_per_unit / clip[:, 3] * settings.trail_width * (1 + (settings.trail_width_end - 1) * t)
        faint = np.minimum(half * 2, 1.0)
        tint = (1 + (np.asarray(settings.trail_color_end) - 1) * t[:, None]) * (1 - settings.trail_fade * t)[:, None]
        colors = look[:3] * brightness * faint[:, None] * tint
        for s in range(len(points) - 1):
            if clip[s, 3] > 0 and clip[s + 1, 3] > 0:
                segments.append(Segment(screen[s:s + 2], np.maximum(half[s:s + 2], 0.5), colors[s:s + 2],
                                        points[s:s + 2], clip[s:s + 2, 2] / clip[s:s + 2, 3] * 0.5 + 0.5))
    return segments


def tiled_segments(segments: list[Segment], width: int, height: int, scene_depth=None,
                   edge_px: float = 1e-3) -> tuple[np.ndarray, np.ndarray]:
    """What trail_accumulate adds of ``segments`` to a width x height layer, (height, width, 3), and where a
    float32 kernel may decide a pixel either way: its center within ``edge_px`` of a segment's end line (along
    0 or 1), or its depth at the scene's (``scene_depth``, (height, width) window depths: hidden behind it).

    A segment adds to the pixels whose centers project inside it (along in [0, 1)) within its interpolated half
    width plus 1/2, its interpolated color times that coverage (clamped to [0, 1]).  trail_footprint leaves out
    segments with an end outside the depth range, of zero length, off the target or whose box holds more than
    MAX_SEGMENT_PIXELS pixels."""
    image = np.zeros((height, width, 3))
    edge = np.zeros((height, width), bool)
    size = np.array([width, height])
    for segment in segments:
        a, b = segment.ends
        d = b - a
        length2 = float(d @ d)
        reach = float(segment.half_px.max()) + 0.5
        low = np.clip(np.floor(np.minimum(a, b) - reach), 0, size).astype(int)
        high = np.clip(np.ceil(np.maximum(a, b) + reach), -1, size - 1).astype(int)
        if (not length2 > 0 or np.any(high < low) or np.prod(high - low + 1) > SIZES["MAX_SEGMENT_PIXELS"]
                or np.any(np.abs(segment.depths - 0.5) > 0.5)):
            continue
        rows, columns = slice(low[1], high[1] + 1), slice(low[0], high[0] + 1)
        y, x = np.mgrid[rows, columns] + 0.5
        dx, dy = x - a[0], y - a[1]
        along = (dx * d[0] + dy * d[1]) / length2
        across = np.abs(dx * d[1] - dy * d[0]) / np.sqrt(length2)
        half = segment.half_px[0] + (segment.half_px[1] - segment.half_px[0]) * along
        coverage = np.clip(half + 0.5 - across, 0.0, 1.0) * ((along >= 0) & (along < 1))
        near_end = (np.minimum(np.abs(along), np.abs(along - 1)) * np.sqrt(length2) < edge_px) & (across < reach)
        if scene_depth is not None:
            depth = segment.depths[0] + (segment.depths[1] - segment.depths[0]) * along
            scene = scene_depth[rows, columns]
            near_end |= (np.abs(depth - scene) < 1e-6) & (coverage > 0)
            coverage = np.where(depth <= scene, coverage, 0.0)
        color = segment.colors[0] + (segment.colors[1] - segment.colors[0]) * along[..., None]
        image[rows, columns] += coverage[..., None] * color
        edge[rows, columns] |= near_end
    return image, edge
