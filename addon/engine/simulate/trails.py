"""Trails: each particle's last positions in a ring buffer on the GPU (trail_tiles.py and ribbons.py draw them).

Reads like the algorithm::

    simulate (one substep)                                   # simulation.py
    trail_record(state -> ring point, head)                  # after every substep (TrailBuffer.record)
    trail_footprint, trail_accumulate(ring -> by tiles)      # Add effects (trail_tiles.py, raster layer)
    trail_ribbons(ring -> a quad per segment, added)         # or rasterized (ribbons.draw_ribbons)
    trail_sprites(ring -> a streak per segment)              # Alpha effects: footprints of the sprite list

The ring of particle i is ``trail_points`` points at ``TrailBuffer.points``:
point j at the particle's state texel plus (j % tiles_x, j / tiles_x) state
sizes (``shaders/include/trail.glsl``), RGBA32F world positions: a long trail
is tens of units across, and half floats (2^-11 relative) would wobble its far
end by millimetres.  ``TrailBuffer.heads`` (one texel a particle, the state's
size) holds x: the ring index of the newest point, y: how many points are
filled, z: the age at the last record (an age that went down: the slot was
reborn).  A (re)born particle's ring starts over at its birth position, so a
trail never joins a dead particle to its next life.

Sampling: ``SUBSTEP`` records a point every step; ``DISTANCE`` one whenever the
particle is ``trail_distance`` from the newest point.  Checkpoints hold the
ring and heads (``ParticleSystem.snapshot``, the disk cache), so trails survive
scrubbing and a split bake equals a whole one.

``record_kernel`` varies by the state images' format (the layout's shape, not a setting of the trail).
"""

from __future__ import annotations

from functools import cache

import numpy as np

from ..seam.kernels import Constant, Image, Kernel
from ..settings.settings import SettingsError

MAX_TRAIL_POINTS = 64
TRAIL_FORMAT = "RGBA32F"  # world positions: see the module's docstring
TRAIL_TEXEL_BYTES = 16
TRAIL_MEMORY_LIMIT = 8 << 30  # bytes of ring buffer one effect may take (the ring plus its heads)

TRAIL_LAYOUT = Constant("VEC4", "trail_layout", components=(
    ("trail_length", "x"),  # points in each ring (trail_points)
    ("tiles_x", "y"),  # ring points side by side before the next row of them (TrailBuffer.tiles_x)
    ("trail_spacing", "z"),  # Distance sampling: world distance between points (0: every step)
))
@cache
def record_kernel(state_format: str) -> Kernel:
    """trail_record over state images of ``state_format`` (state.LAYOUTS)."""
    return Kernel(
        "trail_record",
        images=(Image("pos_age", state_format, "READ"), Image("vel_life", state_format, "READ"),
                Image("trail_points", TRAIL_FORMAT), Image("trail_heads", TRAIL_FORMAT)),
        constants=(Constant("INT", "count"), Constant("VEC4", "state_origin"), TRAIL_LAYOUT),
        includes=("common.glsl", "trail.glsl"),
    )


TRAIL_COPY = Kernel(
    "trail_copy",
    images=(Image("trail_points", TRAIL_FORMAT, "READ"), Image("trail_heads", TRAIL_FORMAT, "READ"),
            Image("copy_points", TRAIL_FORMAT, "WRITE"), Image("copy_heads", TRAIL_FORMAT, "WRITE")),
    local_size=(16, 16, 1),
    includes=(),
)
TRAIL_KERNELS = (*(record_kernel(f) for f in ("RGBA32F", "RGBA16F")), TRAIL_COPY)


def ring_layout(count_width: int, rows: int, points: int, max_texture_size: int) -> tuple[int, int]:
    """(tiles_x, tiles_y): the ring's points laid out as tiles of the state's size, as wide as the GPU allows."""
    tiles_x = max(1, min(points, max_texture_size // count_width))
    return tiles_x, -(-points // tiles_x)


def trail_bytes(settings, width: int, rows: int) -> int:
    """GPU memory of an effect's trails: the ring (points x state texels) and the heads (a texel each)."""
    return (settings.trail_points + 1) * width * rows * TRAIL_TEXEL_BYTES


def check_trails(settings, width: int, rows: int, max_texture_size: int) -> None:
    """Refuse trails that would not fit: in the memory budget, or in the GPU's largest texture."""
    if not settings.trail_points:
        return
    if settings.sort_order == "GRID_CELL":
        raise SettingsError("trails follow each particle slot, and the Grid Cell sort moves particles between slots: "
                            "choose another sort order, or trail_points 0")
    needed = trail_bytes(settings, width, rows)
    if needed > TRAIL_MEMORY_LIMIT:
        most = TRAIL_MEMORY_LIMIT // (width * rows * TRAIL_TEXEL_BYTES) - 1
        raise SettingsError(
            f"trails of {settings.trail_points} points for {settings.count:,} particles need "
            f"{needed / 2**30:,.1f} GiB of GPU memory: at most {TRAIL_MEMORY_LIMIT / 2**30:g} GiB per effect "
            f"(at most {max(most, 0)} points at this count)")
    tiles_x, tiles_y = ring_layout(width, rows, settings.trail_points, max_texture_size)
    if tiles_y * rows > max_texture_size:
        raise SettingsError(
            f"trails of {settings.trail_points} points for {settings.count:,} particles need a "
            f"{tiles_x * width:,} x {tiles_y * rows:,} texture: this GPU's limit is {max_texture_size:,}")


def layout_values(settings, tiles_x: int) -> dict:
    spacing = settings.trail_distance if settings.trail_sampling == "DISTANCE" else 0.0
    return {"trail_length": settings.trail_points, "tiles_x": tiles_x, "trail_spacing": spacing}


class TrailBuffer:
    """One effect's trail rings and heads on the GPU, recorded after every simulate step."""

    def __init__(self, host, settings, width: int, rows: int):
        check_trails(settings, width, rows, host.max_texture_size)
        self.host, self.settings = host, settings
        self.tiles_x, self.tiles_y = ring_layout(width, rows, settings.trail_points, host.max_texture_size)
        self.points = host.texture("trail_points", width * self.tiles_x, rows * self.tiles_y, TRAIL_FORMAT)
        self.heads = host.texture("trail_heads", width, rows, TRAIL_FORMAT)
        self.layout = layout_values(settings, self.tiles_x)
        self.reset()

    @property
    def textures(self) -> dict:
        return {"trail_points": self.points, "trail_heads": self.heads}

    @property
    def nbytes(self) -> int:
        return (self.points.width * self.points.height + self.heads.width * self.heads.height) * TRAIL_TEXEL_BYTES

    def reset(self) -> None:
        """No trail anywhere (every head empty): the next record starts each live particle's ring."""
        self.host.clear(self.heads)

    def record(self, system) -> None:
        """After a simulate step: each live particle's position into its ring (trail_record.glsl)."""
        self.host.dispatch(
            record_kernel(system.layout.format), system.groups,
            {"pos_age": system.pos_age, "vel_life": system.vel_life, **self.textures},
            {"count": system.count, "state_origin": (*system.origin, 0.0), "trail_layout": self.layout_vector},
        )

    @property
    def layout_vector(self):
        return TRAIL_LAYOUT.pack(self.layout)

    def read(self) -> tuple[np.ndarray, np.ndarray]:
        """(points, heads) as float32 arrays: a checkpoint in host memory."""
        return self.host.read(self.points), self.host.read(self.heads)

    def copy_on_gpu(self, into: tuple | None = None) -> tuple:
        """(points, heads) copied into GPU textures (those of ``into`` when they fit)."""
        if into is None or len(into) != 2 or any(isinstance(t, np.ndarray) or t.shape != o.shape
                                                 for t, o in zip(into, (self.points, self.heads))):
            into = tuple(self.host.texture(t.name, t.width, t.height, TRAIL_FORMAT) for t in (self.points, self.heads))
        self._copy(self.textures, into)
        return into

    def restore(self, arrays: tuple) -> None:
        """Back to a checkpoint's (points, heads): arrays from ``read`` or textures from ``copy_on_gpu``."""
        if isinstance(arrays[0], np.ndarray):
            self.points, self.heads = (self.host.texture(t.name, t.width, t.height, TRAIL_FORMAT,
                                                         np.asarray(a, np.float32).reshape(t.height, t.width, 4))
                                       for t, a in zip((self.points, self.heads), arrays))
        else:
            self._copy(dict(zip(("trail_points", "trail_heads"), arrays)), (self.points, self.heads))

    def _copy(self, source: dict, into: tuple) -> None:
        self.host.dispatch(TRAIL_COPY, TRAIL_COPY.groups_for(self.points.width, self.points.height),
                           {**source, "copy_points": into[0], "copy_heads": into[1]}, {})
