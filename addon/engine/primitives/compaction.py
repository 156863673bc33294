"""Compaction of live particles, every frame: keep-flags, scan, scatter.

::

    keep_live(pos_age, vel_life -> keep)            # 1 per live slot
    scan(keep -> offsets, total=live_count)         # exclusive; the count stays on the GPU
    compact_index(keep, offsets -> live_index)      # live slots, in order

Later passes (the splat) dispatch over the known upper bound (the slot count)
and return early past ``live_count``, which they read on the GPU; the host
reads the count back only when it needs the number (stats, bake).

Its kernels vary only by the state images' format (a shape), not by what an effect asks for.
"""

from __future__ import annotations

from ..seam.kernels import Constant, Image, Kernel
from .scan import Scan

# One per state image format (simulation.py's layouts: RGBA32F full, RGBA16F compact).
KEEP_LIVE_KERNELS = {
    state_format: Kernel(
        "keep_live",
        images=(Image("pos_age", state_format, "READ"), Image("vel_life", state_format, "READ"),
                Image("keep", "R32UI", "WRITE")),
        constants=(Constant("INT", "count"),),
        includes=("common.glsl", "particle_alive.glsl"),
    )
    for state_format in ("RGBA32F", "RGBA16F")
}
KEEP_LIVE = KEEP_LIVE_KERNELS["RGBA32F"]

COMPACT_INDEX = Kernel(
    "compact_index",
    images=(Image("keep", "R32UI", "READ"), Image("offsets", "R32UI", "READ"), Image("live_index", "R32UI", "WRITE")),
    constants=(Constant("INT", "count"),),
)

COMPACTION_KERNELS = (*KEEP_LIVE_KERNELS.values(), COMPACT_INDEX)


class LiveParticles:
    """The compacted list of live slots of one particle system, and its count, on the GPU."""

    def __init__(self, host, width: int, rows: int, count: int, state_format: str = "RGBA32F"):
        self.host = host
        self.keep_live = KEEP_LIVE_KERNELS[state_format]
        self.count = count
        self.keep = host.texture("keep", width, rows, "R32UI")
        self.offsets = host.texture("offsets", width, rows, "R32UI")
        self.live_index = host.texture("live_index", width, rows, "R32UI")
        self.live_count = host.texture("live_count", 1, 1, "R32UI")
        self.scan = Scan(host, count)
        self.groups = KEEP_LIVE.groups_for(width, rows)

    @property
    def textures(self) -> dict:
        """What a kernel reading through the compaction binds."""
        return {"live_index": self.live_index, "live_count": self.live_count}

    def compact(self, state: dict) -> None:
        """Rebuild live_index and live_count from the state images (no read-back)."""
        self.host.dispatch(self.keep_live, self.groups, {**state, "keep": self.keep}, {"count": self.count})
        self.scan.run(self.keep, self.offsets, self.count, total=self.live_count)
        self.host.dispatch(
            COMPACT_INDEX, self.groups,
            {"keep": self.keep, "offsets": self.offsets, "live_index": self.live_index}, {"count": self.count},
        )

    def read_count(self) -> int:
        """The live count, read back (a GPU sync: only for stats and the bake)."""
        return int(self.host.read(self.live_count)[0, 0])

    def read_index(self) -> object:
        """The live slots in order, read back (tests, export)."""
        return self.host.read(self.live_index).ravel()[: self.read_count()]
