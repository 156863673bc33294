"""A point cache's PLY body built on the GPU: every live particle's vertex record, as output/point_cache.py's file
stores it, packed by ``ply_records`` into an RGBA32F image in slot order, so the rows read back are the body.

Why on the GPU (points-1M on the H200, bench/results/nvidia-h200-pcie-sse2-2026-12-02-export.json): the numpy
path read the whole state back (32 MB through ``GPUTexture.read``, 38 ms of the main thread's frame) and built
the records from it on a writer (223 ms a frame: the look, ids, rotation, then the rows), 20 frames/s.  Here the
GPU compacts the live slots (compaction.py, in slot order: the file's order), computes each record and the
main thread reads 64 bytes a live particle through a framebuffer (10-14 GB/s on the H100, bench/README.md); the
writer only writes a header and the body.  The records are the numpy reference's (output/export.py's
``particle_attributes`` through ``point_cache.ply_records``) byte for byte: correctly rounded divisions, no
fused multiply-adds, and the per-slot randomness drawn by numpy once a bake (``slot_draws``: cosines and sines
the GPU would round differently) and read by the kernel.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..seam.kernels import Constant, Image, Kernel
from ..seam.row_buffers import RowBuffers
from ..seam.state import LAYOUTS
from ..settings.settings import SettingsError
from .look import LOOK_RANDOM, LOOK_TABLE, particle_values, sprite_draw, variation

PLY_TEXELS = 4  # RGBA32F texels a record: 16 float32, 64 bytes
BODY_WIDTH = 4096  # texels a row of the body image (1024 records), at least (body_size)

PLY_KERNELS = {layout: Kernel(
    "ply_records",
    images=(*LAYOUTS[layout].images("READ"), LOOK_TABLE, Image("live_index", "R32UI", "READ"),
            Image("live_count", "R32UI", "READ"), Image("slot_draws", "RGBA32F", "READ"),
            Image("slot_axis", "RGBA32F", "READ"), Image("ply_body", "RGBA32F", "WRITE")),
    constants=(Constant("INT", "count"), Constant("VEC4", "state_origin"), Constant("INT", "first_id"), LOOK_RANDOM),
    includes=("common.glsl", "random.glsl", "look.glsl"),
    defines=(("PLY_TEXELS", str(PLY_TEXELS)), ("look_seed", "0")),  # look.glsl's variation(), unused here
) for layout in LAYOUTS}
POINT_RECORD_KERNELS = tuple(PLY_KERNELS.values())


@functools.lru_cache(maxsize=8)
def slot_draws(settings, slots: int) -> dict[str, np.ndarray]:
    """What each slot draws at random once (look.glsl's brightness and size, sprite_pose.glsl's angle at birth and
    spin, a uniform axis to turn about), float32 per slot: the same every frame, so made once a bake."""
    F = np.float32
    index = np.arange(slots, dtype=np.uint32)
    seed = settings.seed
    z = F(2) * sprite_draw(index, seed, "AXIS_U") - F(1)
    phi = F(2 * np.pi) * sprite_draw(index, seed, "AXIS_V")
    ring = np.sqrt(np.maximum(F(1) - z * z, F(0)))
    return {
        "brightness": variation(index, settings.color_random, seed, "BRIGHTNESS") * F(settings.emission_strength),
        "size": F(settings.size) * variation(index, settings.size_random, seed, "SIZE"),
        "birth": F(settings.rotation) + F(settings.rotation_random) * (F(2) * sprite_draw(index, seed, "ANGLE") - F(1)),
        "spin": F(settings.spin) * (F(1) - F(settings.spin_random) * sprite_draw(index, seed, "SPIN")),
        "axis": np.stack([ring * np.cos(phi), ring * np.sin(phi), z], axis=1).astype(F),
    }


def body_size(slots: int, max_texture_size: int) -> tuple[int, int]:
    """Width and rows of a body image holding ``slots`` records: BODY_WIDTH texels a row, doubled (a power of two:
    no record straddles rows) while the rows would pass the GPU's texture size; refused (SettingsError) past it."""
    width = BODY_WIDTH
    while -(-slots * PLY_TEXELS // width) > max_texture_size:
        width *= 2
    if width > max_texture_size:
        raise SettingsError(f"A point cache holds at most {max_texture_size**2 // PLY_TEXELS:,} particles an effect "
                            f"on this GPU, not {slots:,}")
    return width, -(-slots * PLY_TEXELS // width)


@dataclass(frozen=True)
class Body:
    """A system's PLY body as read back: ``records`` (live particles x 16) float32 in reused host memory, until
    ``give_back`` (once written) lets a later frame read into it."""

    records: np.ndarray
    give_back: Callable[[], None]


class PointRecords:
    """One system's PLY body on the GPU, frame after frame: ``pack`` records the compaction and the packing,
    ``read`` reads the live particles' records back (the slot draws are uploaded once, when made)."""

    def __init__(self, host, system):
        self.host = host
        width, rows = system.pos_age.width, system.pos_age.height
        draws = slot_draws(system.settings, system.count)
        lanes = np.zeros((2, rows * width, 4), np.float32)
        lanes[0, :system.count] = np.stack([draws[name] for name in ("brightness", "size", "birth", "spin")], axis=1)
        lanes[1, :system.count, :3] = draws["axis"]
        self.slot_draws, self.slot_axis = (host.texture(name, width, rows, "RGBA32F", lane.reshape(rows, width, 4))
                                           for name, lane in zip(("slot_draws", "slot_axis"), lanes))
        self.body = host.texture("ply_body", *body_size(system.count, host.max_texture_size), "RGBA32F")
        self.live = None
        self._memory = RowBuffers(host, (self.body,))  # host memory to read the body into, reused

    def pack(self, system, look, first_id: int) -> None:
        """The system's live particles' records (ids from ``first_id``) into the body image, on the GPU."""
        self.live = system.live
        values = particle_values(system)
        self.host.dispatch(PLY_KERNELS[system.layout.name], system.groups,
                           {**system.textures, "look": look, **self.live.textures, "slot_draws": self.slot_draws,
                            "slot_axis": self.slot_axis, "ply_body": self.body},
                           {"count": system.count, "first_id": first_id,
                            **{name: values[name] for name in ("state_origin", "look_random")}})

    def read(self) -> Body:
        """The records :meth:`pack` made, read back (the PLY body as it is) into memory a writer gave back, else
        new (as many as frames are in flight: a fresh 64 MB a frame cost the H100 twice the copy's time)."""
        count = self.live.read_count()
        (buffer,), give_back = self._memory.take()
        rows = -(-count * PLY_TEXELS // self.body.width)
        return Body(self.host.read_rows(self.body, rows, buffer).reshape(-1)[:count * PLY_TEXELS * 4], give_back)
