"""Footprints: where a point particle's energy lands besides its one pixel.

* Anti-aliased: the 2x2 pixels around its sub-pixel position, bilinear weights.
* Motion blur: a streak over the shutter, from its screen position at shutter
  open (its position then, through the camera then) to the one at close.
* Depth of field: a disc, the thin-lens circle of confusion at its depth.

All three are one kernel (``shaders/splat_footprint.glsl``): a particle is a
few samples along its path and over its disc, each splatted bilinearly, and its
integer energy is split exactly (cumulative rounding), so a footprint adds up
to the one-pixel splat's integer color wherever it lands on the target.  Adds
of consecutive samples to the same pixel are merged in registers first (a
streak one pixel a sample touches about two new pixels a sample, not four), and
a sample's adds go out as one batch of atomics (one wait on memory, not one
per add).  Discs
wider than ``SPLAT_MAX_RADIUS`` are added instead as flat discs binned by
screen tile (``bokeh.py``).  Blender's settings drive both: the scene's
motion blur and shutter, the camera's depth of field (``addon/scene/renderer.py``).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ..seam.kernels import Constant, Feature, Kernel

MAX_SAMPLES = 128  # samples along a streak (one per pixel of its longer axis, then spaced wider); a power of two
SPLAT_MAX_RADIUS = 4.0  # circles of confusion up to this radius in pixels are splatted; wider ones are bokeh discs
# Disc patterns, smallest first: (samples, a power of two; largest radius in pixels they serve).
DISC_LEVELS = ((1, 0.5), (8, 1.5), (32, 2.5), (64, SPLAT_MAX_RADIUS))
GOLDEN_ANGLE = math.pi * (3.0 - math.sqrt(5.0))

SHUTTER_CONSTANTS = (
    Constant("VEC4", "shutter", components=(  # seconds from the frame to shutter open and close
        ("shutter_open", "x"), ("shutter_close", "y"))),
    Constant("MAT4", "view_proj_open"),  # world to clip at shutter open
    Constant("MAT4", "view_proj_close"),  # ... and at close
)


def disc_points() -> np.ndarray:
    """Every level's sample points in the unit disc, concatenated: a Vogel spiral each, even in area,
    visited row by row in a serpentine (neighbouring samples share pixels, whose adds the kernel merges).

    About sqrt(count) / 2.5 rows: with the kernel's merge (three pixel rows
    pending), the fewest flushes over each level's radii (1.5x fewer at 2 px than
    rows of sqrt(count) / 1.5 with two rows pending)."""
    points = []
    for count, _ in DISC_LEVELS:
        k = np.arange(count, dtype=np.float64)
        radius = np.sqrt((k + 0.5) / count) if count > 1 else np.zeros(1)
        angle = k * GOLDEN_ANGLE
        xy = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
        rows = max(1, round(math.sqrt(count) / 2.5))
        row = np.minimum(((xy[:, 1] + 1) / 2 * rows).astype(int), rows - 1)
        points.append(xy[np.lexsort((np.where(row % 2 == 0, xy[:, 0], -xy[:, 0]), row))])
    return np.concatenate(points).astype(np.float32)


DISC = disc_points()
DISC_VEC4S = -(-len(DISC) // 2)  # two points a vec4
FOCUS = Constant("VEC4", "focus", components=(
    ("coc_scale", "x"),  # circle of confusion scale in pixels
    ("focus_depth", "y"),  # focus distance (clip w)
    ("splat_max_radius", "z"),  # SPLAT_MAX_RADIUS: wider circles are bokeh discs
))
DISC_CONSTANT = Constant("VEC4", "disc", DISC_VEC4S)  # DISC, two points a vec4


def _disc_defines() -> tuple[tuple[str, str], ...]:
    counts = [count for count, _ in DISC_LEVELS]
    firsts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return (("DISC_LEVELS", str(len(DISC_LEVELS))), ("DISC_COUNTS", ", ".join(map(str, counts))),
            ("DISC_FIRSTS", ", ".join(str(int(f)) for f in firsts)),
            ("DISC_RADII", ", ".join(f"{radius:.1f}" for _, radius in DISC_LEVELS)))


def disc_uniform() -> np.ndarray:
    """DISC as the (DISC_VEC4S, 4) array the kernels read: points 2i in xy, 2i + 1 in zw."""
    padded = np.zeros((DISC_VEC4S * 2, 2), np.float32)
    padded[:len(DISC)] = DISC
    return padded.reshape(DISC_VEC4S, 4)


@dataclass(frozen=True)
class Shutter:
    """The camera's shutter: seconds from the frame to open and close, and the camera at both."""

    open: float
    close: float
    view_proj_open: np.ndarray
    view_proj_close: np.ndarray

    @classmethod
    def still(cls, view_proj, open_s: float, close_s: float) -> Shutter:
        """A shutter with the camera standing still (only particles move)."""
        return cls(open_s, close_s, np.asarray(view_proj), np.asarray(view_proj))


@dataclass(frozen=True)
class Focus:
    """Thin-lens depth of field: a particle at clip w spreads over radius ``scale_px * |w - distance| / w`` pixels."""

    scale_px: float
    distance: float

    @classmethod
    def thin_lens(cls, lens_mm: float, fstop: float, distance: float, px_per_mm: float, unit_scale: float = 1.0) -> Focus:
        """From a camera's lens (millimetres), f-stop and focus distance (scene units).

        Aperture radius f / (2 N); an object at depth z images to a circle of
        radius aperture * f * |z - d| / (z (d - f)) on the sensor, ``px_per_mm``
        pixels a sensor millimetre (P[0][0] * width / (2 * lens) for a projection P).
        ``unit_scale``: the scene's metres per unit.
        """
        focal = lens_mm * 1e-3 / unit_scale
        px_per_unit = px_per_mm * 1e3 * unit_scale  # on the sensor
        distance = max(distance, 1e-5)
        scale = (focal / (2.0 * fstop)) * focal / max(distance - focal, 1e-9) * px_per_unit
        return cls(float(scale), float(distance))

    def radius_px(self, clip_w):
        return self.scale_px * np.abs(clip_w - self.distance) / clip_w

    def widest_px(self, view_proj) -> float:
        """The widest circle of confusion of anything the kernels keep (clip w > 0, |z| <= w) through ``view_proj``.

        radius_px is monotone in w on each side of the focus distance, so the
        widest is at an end of the kept range of w.  That range is an interval
        where clip z follows clip w (z = alpha w + beta: perspective and
        orthographic cameras); otherwise (an oblique projection) unbounded: inf.
        """
        view_proj = np.asarray(view_proj, np.float64)
        z_row, w_row = view_proj[2, :3], view_proj[3, :3]
        if not w_row.any():  # orthographic: one w everywhere
            low = high = view_proj[3, 3]
        else:
            alpha = z_row @ w_row / (w_row @ w_row)
            if np.linalg.norm(z_row - alpha * w_row) > 1e-6 * np.linalg.norm(z_row):
                return math.inf
            beta = view_proj[2, 3] - alpha * view_proj[3, 3]
            low, high = 0.0, math.inf
            for a, b in ((alpha - 1.0, -beta), (-(alpha + 1.0), beta)):  # -w <= alpha w + beta <= w as a w <= b
                if a > 0:
                    high = min(high, b / a)
                elif a < 0:
                    low = max(low, b / a)
                elif b < 0:
                    return 0.0  # nothing is kept
        if not (high > 0 and high >= low):
            return 0.0
        far = self.scale_px if math.isinf(high) else self.radius_px(high)  # the limit as w grows
        return float(max(far, self.radius_px(max(low, 1e-30))))


def footprint_kernel(base: Kernel) -> Kernel:
    """The footprint splat over ``base``'s state layout (``base``: a naive splat kernel): bilinear taps always; its
    features the streak over the shutter (MOTION_BLUR) and the disc of taps over the circle of confusion
    (SPLAT_FOCUS), then ``base``'s."""
    return dataclasses.replace(base, name="splat_footprint", includes=(*base.includes, "footprint.glsl"),
                               defines=(("MAX_SAMPLES", str(MAX_SAMPLES)),),
                               features=(MOTION_BLUR, SPLAT_FOCUS, *base.features))


def footprint_constants(camera, disc: bool = True) -> dict:
    """The footprint kernels' extra constants for ``camera`` (its shutter and focus, when it has them;
    ``disc``: the splat's disc pattern too)."""
    values = {}
    if camera.shutter is not None:
        s = camera.shutter
        values.update(shutter=(s.open, s.close, 0.0, 0.0), view_proj_open=s.view_proj_open,
                      view_proj_close=s.view_proj_close)
    if camera.focus is not None:
        values["focus"] = (camera.focus.scale_px, camera.focus.distance, SPLAT_MAX_RADIUS, 0.0)
        if disc:
            values["disc"] = disc_uniform()
    return values


# The camera's features of the kernels that draw particles' footprints (``for_effect(settings, camera=...)``):
# stretched over its shutter (motion blur), widened by its circle of confusion (depth of field).
MOTION_BLUR = Feature("motion", defines=(("MOTION_BLUR", "1"),), constants=SHUTTER_CONSTANTS,
                      includes=("footprint.glsl",), wants=lambda settings, frame: frame["camera"].shutter is not None)
DEPTH_OF_FIELD = Feature("focus", defines=(("DEPTH_OF_FIELD", "1"),), constants=(FOCUS,), includes=("footprint.glsl",),
                         wants=lambda settings, frame: frame["camera"].focus is not None)
# The footprint splat's: its taps spread over the disc (DISC) of the circle of confusion.
SPLAT_FOCUS = dataclasses.replace(DEPTH_OF_FIELD, defines=(*DEPTH_OF_FIELD.defines, *_disc_defines()),
                                  constants=(FOCUS, DISC_CONSTANT), includes=())


def declared_footprint_constants(camera, kernel: Kernel) -> dict:
    """footprint_constants (without the disc) that ``kernel`` declares: a sprite program's shutter or focus."""
    declared = {c.name for c in kernel.constants}
    return {name: value for name, value in footprint_constants(camera, disc=False).items() if name in declared}


