"""The particle state: two images per effect, in one of two layouts.

Particle i lives at texel (i % width, i / width) of two state images:

=========  ==========================================  =====================================
image      xyz                                         w
=========  ==========================================  =====================================
pos_age    position relative to the state origin       age in seconds; negative: not born yet,
                                                       or waiting to respawn (Sylvan's
                                                       sign-bit "skip": hidden, free to move)
vel_life   velocity, world units per second            lifetime in seconds; 0: not (re)born,
                                                       negative: died and will not respawn
=========  ==========================================  =====================================

Two layouts, chosen per effect (``state_layout``):

* ``FULL``: both images RGBA32F, 32 bytes per particle; the state origin is
  (0, 0, 0), positions are world coordinates.
* ``COMPACT``: both images RGBA16F (IEEE half: 1 sign, 5 exponent, 10
  mantissa bits), 16 bytes per particle: texel bytes 0-1 x, 2-3 y, 4-5 z,
  6-7 w, little-endian halves.  Positions are stored relative to the emitter's
  position at the end of each step (the per-step origin), so the half's
  relative precision (2^-11) applies to the distance from the emitter, not from
  the world origin; every step re-bases them (load + origin_in, store -
  origin_out).  Halves reach 65504; stored values are clamped there.  The
  error this costs is measured in tests/engine/simulate/test_simulation.py and
  bench/simulate_gpu.py.

  Ages and lifetimes are halves too, so a compact effect's schedule drifts
  from a full one's with the same seed: each step's ``age + dt`` rounds to
  the half grid (2^-12 s near half a second), so about 2% of incarnations die
  one step earlier or later than in float32, and that slot's next incarnation
  is another particle (emission randomness is keyed by the birth step).  The
  share of slots holding the same particle as the full layout decays by that
  much per lifetime (20,000 particles, 0.5 s lifetime, 24 fps, reference:
  99.8% after 12 frames, 95% after 96, 65% after 480, 48% after 1440).  Both
  layouts keep the emission rate and each matches its own reference exactly
  (ages and lifetimes bit for bit); they are two simulations, not one.

Blender 5.2 reads RGBA16F images back as floats (its RGBA32UI readback is
broken), so the compact layout uses the float half format rather than
packHalf2x16 into integer images; the bytes on the GPU are the same.
"""

from __future__ import annotations

from dataclasses import dataclass

from .kernels import Image

STATE_ROW_MULTIPLE = 256  # state image widths are multiples of one simulate workgroup


@dataclass(frozen=True)
class StateLayout:
    """One way of storing the two state images: their format, size per particle and largest value."""

    name: str
    format: str
    bytes_per_particle: int
    limit: str  # largest magnitude a stored component may take (GLSL literal)

    def images(self, access: str = "READ_WRITE") -> tuple[Image, Image]:
        return (Image("pos_age", self.format, access), Image("vel_life", self.format, access))


LAYOUTS = {
    "FULL": StateLayout("FULL", "RGBA32F", 32, "3.0e38"),
    "COMPACT": StateLayout("COMPACT", "RGBA16F", 16, "65504.0"),
}

STATE_IMAGES = LAYOUTS["FULL"].images()
STATE_READ = LAYOUTS["FULL"].images("READ")


def state_size(count: int, max_texture_size: int) -> tuple[int, int]:
    """Width and rows of the state images: a power-of-two width (>= one workgroup), square-ish."""
    width = STATE_ROW_MULTIPLE
    while width * width < count and width < max_texture_size:
        width *= 2
    return width, max(1, -(-count // width))
