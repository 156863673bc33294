"""Atomic compositing: particles splatted into integer images, resolved to float.

See ``shaders/include/color_pack.glsl`` for the R21G22B21 packing in two uint32.

Variants: the splats by state layout (``SPLAT_KERNELS``), aggregated and paired by measurement (shapes, not
settings); the scene depth (``DEPTH_TEST``), the footprint splat's shutter and focus (footprint.py), the look, the
resolve's peak (automatic Emax: ``PEAK``) and the sprite layer over the frame (``SPRITES_OVER``) are features.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from ..look.lighting import LOOK_FEATURES
from ..look.look import (
    COLOR_END,
    COLOR_START,
    LOOK_RANDOM,
    LOOK_SEED,
    particle_values,
)
from ..seam import tables
from ..seam.kernels import Constant, Feature, Image, Kernel, Sampler, Shared
from ..seam.records import FRAME_STATS
from ..seam.state import LAYOUTS
from ..settings.settings import RENDER_FIELDS, RenderSettings, SettingsError
from ..simulate.simulation import ParticleSystem
from . import raster, ribbons
from .bokeh import BokehLayer
from .depth import TILE
from .footprint import (
    SPLAT_MAX_RADIUS,
    Focus,
    Shutter,
    footprint_constants,
    footprint_kernel,
)
from .frame_resources import FrameResources
from .quad_tiles import QuadLayer, is_tiled
from .trail_tiles import TrailLayer

# Integer range of each packed channel: R and B have 21 bits, G has 22.
CHANNEL_MAX = np.array([tables.CHANNEL_MAX[c] for c in "RGB"], dtype=np.float64)

ACCUM_IMAGES = (
    Image("accum_hi", "R32UI", atomic=True),
    Image("accum_lo", "R32UI", atomic=True),
)
# With paired accumulation (accum.glsl): each pixel's hi and lo side by side, the pixels in raster
# order over rows of 2^ACCUM_ROW_BITS texels.
ACCUM_PAIRED = Image("accum", "R32UI", atomic=True)
ACCUM_ROW_BITS = 13
PAIRED_DEFINES = (("ACCUM_PAIRED", "1"), ("ACCUM_ROW_BITS", str(ACCUM_ROW_BITS)))
STATS = Image("stats", "R32UI", atomic=True)  # 2x1: a records.FRAME_STATS
SPLAT_INCLUDES = ("common.glsl", "color_pack.glsl", "accum.glsl", "random.glsl", "look.glsl", "particle_alive.glsl", "particle_look.glsl",
                  "particle_read.glsl")
SPLAT_CONSTANTS = (
    Constant("INT", "count"),
    Constant("IVEC2", "target_size"),
    Constant("MAT4", "view_proj"),
    COLOR_START,
    COLOR_END,
    Constant("VEC4", "quantize", components=(
        ("quantize_scale", "xyz"),  # Imax / Emax per channel
        ("pixel_scale", "w"),  # pixels per world unit at clip w = 1
    )),
    Constant("VEC4", "state_origin"),  # xyz: what stored positions are relative to (simulation.py)
    LOOK_RANDOM,
    LOOK_SEED,
)


def _splat_kernel(layout) -> Kernel:
    return Kernel(
        "splat",
        images=(*layout.images("READ"), *ACCUM_IMAGES, STATS, Image("look", "RGBA32F", "READ")),
        constants=SPLAT_CONSTANTS,
        includes=SPLAT_INCLUDES,
        features=LOOK_FEATURES,
    )


# The naive splat: one pair of returning atomics per particle.
SPLAT_KERNELS = {name: _splat_kernel(layout) for name, layout in LAYOUTS.items()}
SPLAT = SPLAT_KERNELS["FULL"]

# The same splat with same-pixel adds summed per workgroup in shared memory first
# (for clumps: one global add per distinct pixel and group); identical images.
# The product default, chosen by measurement: bench/results/nvidia-h200-2026-11-21-splat-run1.json.
def aggregate_kernel(kernel: Kernel, per_thread: int = 1) -> Kernel:
    """The aggregated splat of ``kernel``'s layout over 256 x ``per_thread`` particles a group (1, 2 or 4).

    The shared table has twice as many slots as the group has particles
    (4 x 8 KiB at 4 per thread, within GL's 32 KiB minimum).
    """
    bits = 9 + per_thread.bit_length() - 1
    return dataclasses.replace(
        kernel,
        name="splat_aggregate",
        shared=tuple(Shared("uint", table, 1 << bits) for table in ("table_key", "table_r", "table_g", "table_b")),
        defines=(("TABLE_BITS", f"{bits}u"), ("TABLE_SIZE", f"{1 << bits}u"), ("PER_THREAD", str(per_thread))),
    )


def per_thread(kernel: Kernel) -> int:
    """Particles each invocation of a splat kernel handles (the dispatch has that many times fewer rows)."""
    return int(dict(kernel.defines).get("PER_THREAD", 1))


SPLAT_AGGREGATE_KERNELS = {name: aggregate_kernel(kernel) for name, kernel in SPLAT_KERNELS.items()}
SPLAT_AGGREGATE = SPLAT_AGGREGATE_KERNELS["FULL"]


# A splat testing the scene depth (SceneDepth.textures): the coarse tile range first, the full-resolution depth
# inside it; samplers, not images: Blender binds at most 8 images a shader.
DEPTH_TEST = Feature("depth_test", defines=(("DEPTH_TEST", "1"), ("COARSE_TILE", str(TILE))),
                     samplers=(Sampler("coarse_depth"), Sampler("scene_depth")),
                     wants=lambda settings, frame: frame["depth"], binds=lambda depth: depth.textures, source="depth")


@cache
def splat_variant(base: Kernel, paired: bool = False) -> Kernel:
    """``base`` (a naive, aggregated or footprint splat) adding into the paired image when ``paired`` (both
    accumulation words in one image: accum.glsl); its features DEPTH_TEST and then ``base``'s (the look's)."""
    if paired:
        base = dataclasses.replace(base, images=tuple(_paired_images(base.images)),
                                   defines=(*base.defines, *PAIRED_DEFINES))
    return dataclasses.replace(base, features=(DEPTH_TEST, *base.features))


def _paired_images(images):
    """``images`` with accum_hi and accum_lo replaced by the one paired image, in accum_hi's slot."""
    return [ACCUM_PAIRED if image is ACCUM_IMAGES[0] else image for image in images if image is not ACCUM_IMAGES[1]]


# The product's accumulation layout (accum.glsl): paired, hi and lo in one sector, in raster order.
# Chosen by measurement: bench/results/h200-2026-11-21.json (splat_variant *_aggregate1[_paired]) and
# bench/results/nvidia-h100-80gb-hbm3-pcie-sse2-2026-11-25-splat-layout-ab.json.
PAIRED = True
SPLAT_VARIANTS = tuple(splat_variant(base, PAIRED) for kernels in (SPLAT_KERNELS, SPLAT_AGGREGATE_KERNELS)
                       for base in kernels.values())

RESOLVE = Kernel(
    "resolve",
    images=(*ACCUM_IMAGES, Image("frame", "RGBA32F", "WRITE"), STATS),
    samplers=(Sampler("raster"),),
    constants=(
        Constant("IVEC2", "target_size"),
        Constant("VEC4", "dequantize"),  # xyz: Emax / Imax per channel
        Constant("INT", "has_raster"),  # 1: add the rasterized target (points, sprites, quads)
    ),
    local_size=(16, 16, 1),
    includes=("common.glsl", "color_pack.glsl", "accum.glsl"),
)

# The resolve that also measures the frame's peak (automatic Emax).
PEAK = Feature("peak", defines=(("MEASURE_PEAK", "1"),), shared=(Shared("uint", "group_peak", 256),),
               wants=lambda render, frame: render.emax_mode == "AUTO")


# The footprint splats (footprint.py): naive atomics per tap, bilinear taps always, streak and disc on demand.
FOOTPRINT_KERNELS = {name: footprint_kernel(kernel) for name, kernel in SPLAT_KERNELS.items()}
# What the product dispatches (with or without the scene depth: their features).
FOOTPRINT_VARIANTS = tuple(splat_variant(kernel, PAIRED) for kernel in FOOTPRINT_KERNELS.values())


# The alpha-blended sprite layer (sprites.py) laid over the frame in the resolve (no pass over the frame of its own).
SPRITES_OVER = Feature("sprites_over", defines=(("SPRITES_OVER", "1"),), samplers=(Sampler("sprites"),),
                       wants=lambda render, frame: frame["sprites"] is not None,
                       binds=lambda sprites: {"sprites": sprites}, source="sprites")


@cache
def resolve_kernel(paired: bool = False) -> Kernel:
    """RESOLVE, reading the paired accumulation image when ``paired``; its features PEAK and SPRITES_OVER."""
    kernel = RESOLVE
    if paired:
        kernel = dataclasses.replace(kernel, images=tuple(_paired_images(kernel.images)),
                                     defines=(*kernel.defines, *PAIRED_DEFINES))
    return dataclasses.replace(kernel, features=(PEAK, SPRITES_OVER))


_EMAX = {f.name: f for f in RENDER_FIELDS}["emax"]


@dataclass(frozen=True)
class Camera:
    """What the splat needs from a camera: world to clip, and pixels per unit at w = 1;
    with ``shutter`` points streak over it (motion blur), with ``focus`` they spread
    over their circle of confusion (depth of field), see footprint.py."""

    view_proj: np.ndarray  # 4x4, row-major, OpenGL clip conventions
    width: int
    height: int
    shutter: Shutter | None = None
    focus: Focus | None = None

    @property
    def pixels_per_unit(self) -> float:
        """Projected size scale: a radius r at clip w covers r * this / w pixels."""
        return float(np.linalg.norm(self.view_proj[1, :3])) * self.height / 2

    @classmethod
    def pixel_grid(cls, width: int, height: int) -> Camera:
        """Orthographic camera whose world x, y are target pixels ([0, width] x [0, height]) and
        z in [-10, 10] is inside: particles placed exactly on pixels, for tests and benchmarks."""
        view_proj = np.diag([2.0 / width, 2.0 / height, 0.1, 1.0])
        view_proj[:2, 3] = -1.0
        return cls(view_proj, width, height)


def perspective(fov_y: float, aspect: float, near: float, far: float) -> np.ndarray:
    f = 1.0 / math.tan(fov_y / 2)
    return np.array(
        [[f / aspect, 0, 0, 0], [0, f, 0, 0],
         [0, 0, (far + near) / (near - far), 2 * far * near / (near - far)], [0, 0, -1, 0]],
        dtype=np.float64,
    )


def camera_view(eye, target, up=(0.0, 0.0, 1.0)) -> np.ndarray:
    """World to view matrix of a camera at ``eye`` looking at ``target`` (Blender's -Z forward)."""
    eye, target, up = (np.asarray(v, dtype=np.float64) for v in (eye, target, up))
    forward = target - eye
    forward /= np.linalg.norm(forward)
    right = np.cross(forward, up)
    right /= np.linalg.norm(right)
    true_up = np.cross(right, forward)
    view = np.identity(4)
    view[0, :3], view[1, :3], view[2, :3] = right, true_up, -forward
    view[:3, 3] = -view[:3, :3] @ eye
    return view



def quantize_scale(emax: float) -> np.ndarray:
    """Imax / Emax per channel, as float32 (what the kernel multiplies by)."""
    return (CHANNEL_MAX / emax).astype(np.float32)


def dequantize_scale(emax: float) -> np.ndarray:
    return (emax / CHANNEL_MAX).astype(np.float32)


@dataclass(frozen=True)
class FrameStats:
    """What one frame's splat and resolve measured (the UI shows both)."""

    overflow: int  # atomic adds that overflowed a channel: raise Emax
    peak: float  # brightest accumulated channel (AUTO mode only; meaningless after an overflow)


def _frame_stats(texels: np.ndarray) -> FrameStats:
    """The stats image's two words: overflowing adds, the peak's float bits."""
    stats = FRAME_STATS.read(np.asarray(texels).reshape(FRAME_STATS.texels, FRAME_STATS.channels))
    return FrameStats(int(stats["overflow"]), float(np.array(stats["peak"], np.uint32).view(np.float32)))


def next_emax(emax: float, stats: FrameStats, headroom: float) -> float:
    """Automatic Emax for the next frame from this frame's measurement.

    An overflowing frame's peak has wrapped, so Emax grows fourfold until a
    frame fits; otherwise it follows the peak with ``headroom``.  An empty
    frame keeps the current Emax.
    """
    if stats.overflow:
        wanted = emax * 4.0
    elif stats.peak > 0.0:
        wanted = stats.peak * headroom
    else:
        wanted = emax
    return min(max(wanted, _EMAX.min), _EMAX.max)


class Compositor:
    """The Add layer: the atomic splat into the R32UI accumulation (one paired image or two, accum.glsl), the
    quads, trails and bokeh into the frame's rasterized layer, resolved into the frame (``resources``)."""

    def __init__(self, resources: FrameResources, render: RenderSettings, paired: bool = PAIRED):
        if not render.emax > 0:
            raise SettingsError(f"emax must be positive, not {render.emax}")
        host, width, height = resources.host, resources.width, resources.height
        self.resources = resources
        self.host = host
        self.width, self.height = width, height
        self.render = render
        self.emax = render.emax  # follows the frames in AUTO mode
        self.paired = paired
        if paired:
            row = 1 << ACCUM_ROW_BITS
            rows = -(-2 * width * height // row)
            if rows > host.max_texture_size:
                raise SettingsError(f"resolution {width}x{height} has more pixels than this GPU's accumulation image "
                                    f"can hold ({row * host.max_texture_size // 2:,})")
            self.accum = host.texture("accum", row, rows, "R32UI")
            self.accum_textures = {"accum": self.accum}
        else:
            self.accum_hi = host.texture("accum_hi", width, height, "R32UI")
            self.accum_lo = host.texture("accum_lo", width, height, "R32UI")
            self.accum_textures = {"accum_hi": self.accum_hi, "accum_lo": self.accum_lo}
        self.stats = host.texture("stats", 2, 1, "R32UI")
        # Splat kernel per state layout: aggregated (the product), or SPLAT_KERNELS, the naive one.
        self.splat_kernels = SPLAT_AGGREGATE_KERNELS
        # Points into the 2x2 pixels around them (footprint.py) rather than one; the bake turns it on.
        self.antialias = False
        self.bokeh: BokehLayer | None = None  # made at the first wide circle of confusion
        self.quads: QuadLayer | None = None  # made at the first untextured quad effect (quad_tiles.py)
        self.trails: TrailLayer | None = None  # made at the first Add effect's trails (trail_tiles.py)
        self.check_every = 1  # draws between read-backs of the tile lists' instance totals (the viewport's: rare)

    def add(self, system: ParticleSystem, camera: Camera) -> None:
        """Composite one effect: points by the atomic splat (or GL_POINTS), quads by tiles (quad_tiles.py),
        textured ones rasterized; then its trails (add_trails)."""
        resources = self.resources
        if system.settings.particle_type == "POINT" and self.render.point_mode == "ATOMIC":
            self.splat(system, camera)
        elif is_tiled(system.settings):
            if self.quads is None:
                self.quads = QuadLayer(self.host, self.width, self.height, self.check_every)
            self.quads.draw(system, camera, resources.raster_target(camera), resources.depth_image,
                            resources.look_texture(system))
        else:
            raster.draw(self.host, system, camera, resources.raster_target(camera), resources.depth_image,
                        resources.look_texture(system), resources.sheets)
        if system.trails is not None:
            self.add_trails(system, camera)

    def add_trails(self, system: ParticleSystem, camera: Camera) -> None:
        """Add the effect's trails into the rasterized layer: by tiles (trail_tiles.py), or as rasterized
        ribbons (render setting trail_draw)."""
        resources = self.resources
        if self.render.trail_draw == "SPLAT":
            if self.trails is None:
                self.trails = TrailLayer(self.host, self.width, self.height, self.check_every)
            self.trails.draw(system, camera, resources.raster_target(camera), resources.depth_image,
                             resources.look_texture(system))
        else:
            ribbons.draw_ribbons(self.host, system, camera, resources.raster_target(camera), resources.depth_image,
                                 resources.look_texture(system))

    def uses_footprint(self, camera: Camera) -> bool:
        """Points splat with a footprint (2x2, streak, disc) rather than into one pixel."""
        return self.antialias or camera.shutter is not None or camera.focus is not None

    def splat(self, system: ParticleSystem, camera: Camera) -> None:
        """Add the system's live particles: a thread a slot, the dead and unborn skipped where they are read
        (compacting the live slots first would read the whole state once more: compaction.py).

        With a footprint (``uses_footprint``) the footprint splat runs instead,
        and circles of confusion too wide for it are added as bokeh discs
        (bokeh.py), unless none in view can be that wide (the pass would visit
        every particle for nothing).
        """
        resources = self.resources
        q = quantize_scale(self.emax)
        look = resources.look_texture(system)
        layout = system.layout.name
        footprint = self.uses_footprint(camera)
        base = FOOTPRINT_KERNELS[layout] if footprint else self.splat_kernels[layout]
        kernel = splat_variant(base, self.paired).for_effect(system.settings, depth=resources.depth is not None,
                                                              camera=camera)
        groups_x, rows, _ = system.groups
        self.host.dispatch(
            kernel, (groups_x, -(-rows // per_thread(kernel)), 1),
            {**system.textures, **self.accum_textures, "stats": self.stats,
             "look": look, **kernel.bindings(system=system, depth=resources.depth)},
            {
                **(footprint_constants(camera) if footprint else {}),
                "count": system.count,
                "target_size": (self.width, self.height),
                "view_proj": camera.view_proj,
                **particle_values(system),
                "quantize": (*q, camera.pixels_per_unit),
            },
        )
        # (0.999: the kernels compute radii in float32, this bound in float64)
        if camera.focus is not None and camera.focus.widest_px(camera.view_proj) > 0.999 * SPLAT_MAX_RADIUS:
            if self.bokeh is None:
                self.bokeh = BokehLayer(self.host, self.width, self.height, self.check_every)
            self.bokeh.draw(system, camera, resources.raster_target(camera), resources.depth_image, look)

    def resolve(self, sprites=None) -> None:
        """The frame's float RGBA: the splat plus what was rasterized, and ``sprites`` (the alpha-blended layer,
        premultiplied) over it when given; clears the accumulation."""
        resources = self.resources
        kernel = resolve_kernel(self.paired).for_effect(self.render, sprites=sprites)
        self.host.dispatch(
            kernel, RESOLVE.groups_for(self.width, self.height),
            {**self.accum_textures, "frame": resources.frame, "stats": self.stats, "raster": resources.raster,
             **kernel.bindings(sprites=sprites)},
            {"target_size": (self.width, self.height), "dequantize": (*dequantize_scale(self.emax), 0.0),
             "has_raster": int(resources.rasterized)},
        )
        resources.rasterized = False

    def read_accum(self) -> tuple[np.ndarray, np.ndarray]:
        """The accumulation words (hi, lo), each height x width, whichever the layout."""
        if self.paired:
            words = self.host.read(self.accum).ravel()[: 2 * self.width * self.height]
            pairs = words.reshape(self.height, self.width, 2)
            return pairs[..., 0], pairs[..., 1]
        return self.host.read(self.accum_hi), self.host.read(self.accum_lo)

    def read_frame(self) -> np.ndarray:
        return self.host.read(self.resources.frame)

    def discard_stats(self) -> None:
        """Reset the overflow and peak counters unread (no GPU wait: nobody looks at this frame's)."""
        self.host.clear(self.stats)

    def take_stats(self) -> FrameStats:
        """Overflows and peak since the last call, then reset; in AUTO mode, Emax follows them."""
        stats = _frame_stats(self.host.read(self.stats))
        self.host.clear(self.stats)
        if self.render.emax_mode == "AUTO":
            self.emax = next_emax(self.emax, stats, self.render.emax_headroom)
        return stats

    @property
    def stats_can_wait(self) -> bool:
        """Whether a frame's stats may be read after the next frame is drawn: in MANUAL mode nothing drawn
        depends on them (AUTO sets the next frame's Emax from them), and the host must read without
        waiting (otherwise the read comes after the reset of :meth:`store_stats`)."""
        return self.render.emax_mode == "MANUAL" and self.host.reads_without_waiting

    def store_stats(self, buffer) -> None:
        """Queue the copy of the overflows and peak into ``buffer`` (the host's ``readback_buffer(stats)``),
        then reset them for the next frame; :meth:`stored_stats` reads the copy once the GPU made it.
        Only where :attr:`stats_can_wait`."""
        self.host.read_start(self.stats, buffer)
        self.host.clear(self.stats)

    def stored_stats(self, buffer) -> FrameStats:
        """What :meth:`store_stats` copied (waits, asleep, for that copy)."""
        return _frame_stats(self.host.read_finish(self.stats, buffer))
