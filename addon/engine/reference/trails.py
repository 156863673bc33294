"""numpy reference of the trails (addon/engine/trails.py): the ring buffer's record (trail_record.glsl, in the
kernel's float32 order: bit for bit) and the ribbons' geometry (trail_ribbons.glsl: where each segment lies on
screen, how wide, in what color; the tests compare the drawn pixels within the rasterizer's rounding)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..look import look_at, look_table, variation
from .lighting import alive

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
    position = pos_age[:, :3] + np.asarray(origin, F)[:3]
    age = pos_age[:, 3]
    live = alive(np.column_stack([position, age]), vel_life)
    newest, filled = rings.heads[:, 0].astype(np.int64), rings.heads[:, 1].astype(np.int64)
    born = live & ((filled == 0) | (age < rings.heads[:, 2]))
    birth = position - vel_life[:, :3] * age[:, None]
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


def ribbon_segments(settings, rings: Rings, pos_age, vel_life, view_proj, width: int, height: int,
                    pixels_per_unit: float, ramp=None) -> list[Segment]:
    """The segments trail_ribbons.glsl draws for (n, 4) world-space states (no shutter), in float64."""
    pos_age, vel_life = np.asarray(pos_age, np.float64), np.asarray(vel_life, np.float64)
    view_proj = np.asarray(view_proj, np.float64)
    table = look_table(settings, ramp)
    live = alive(pos_age, vel_life)
    segments = []
    for slot in np.flatnonzero(live):
        t_life = F(pos_age[slot, 3] / vel_life[slot, 3])
        look = look_at(table, np.array([t_life], F))[0].astype(np.float64)
        radius = settings.size * look[3] * float(variation(slot, settings.size_random, settings.seed, "SIZE"))
        brightness = settings.emission_strength * float(variation(slot, settings.color_random, settings.seed,
                                                                  "BRIGHTNESS"))
        points = np.vstack([pos_age[slot, :3], rings.newest_first(slot)]).astype(np.float64)
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
                                        points[s:s + 2]))
    return segments
