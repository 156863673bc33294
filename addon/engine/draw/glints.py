"""Glints: star or flare sprites on the brightest points of the composited frame.

After compositing (``pipeline.composite_into``), three steps::

    glint_extract   brightest pixel of each 8x8 tile above the threshold -> the tile's slot of the list
    glint_sprites   one additive star per point into the glint layer (an instance a tile, in tile order)
    glint_add       frame += glint layer

The extraction is the seed's lens-flare reduction ("Optimising a Compute
Shader"); its four layouts are all declared here (``EXTRACT_VARIANTS``) and
give identical lists; the product runs the fastest, ``2x2-shared``.  Where the
seed appends through an atomic counter, each tile writes its own slot: in the
counter's order (the GPU's, run to run) overlapping stars' additive half-float
blends rounded differently; in tile order a bake gives the same frames every run.

The extraction's layout is a device's shape (``extract_for``: by the GPU, not the effect), so the layouts stay a
table rather than features; the sprites and the add have no variants.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..seam.kernels import Constant, Image, Kernel, Raster, Sampler, Shared
from ..settings.settings import RENDER_FIELDS

TILE = 8
LIST_WIDTH = 1024  # points per row of the list image (two RGBA32F texels each)
QUAD_VERTICES = 6  # a glint is a core quad and one thin quad per ray (glint_sprites.glsl)

_LIST_INCLUDE = ("glint_list.glsl",)  # the list's layout, shared by glint_extract and glint_sprites
_EXTRACT_IMAGES = (
    Image("frame", "RGBA32F", "READ"),
    Image("glint_list", "RGBA32F", "WRITE"),
)
_EXTRACT_CONSTANTS = (
    Constant("IVEC2", "target_size"),
    Constant("FLOAT", "threshold"),
    Constant("INT", "list_width"),
)


def extract_kernel(texels: int, serial: bool = False) -> Kernel:
    """glint_extract with each thread reading ``texels`` x ``texels`` texels of its tile.

    texels 1: an 8x8 group per tile, the search in shared memory (by one
    thread when ``serial``, else a tree); 2: a 4x4 group per tile; 8: one
    thread per tile, no sharing (the seed's 32x32 groups).
    """
    threads = TILE // texels
    defines = [("GLINT_TILE", str(TILE)), ("TEXELS", str(texels)), ("TILE_THREADS", str(threads))]
    if serial:
        defines.append(("SERIAL_SEARCH", "1"))
    slots = threads * threads
    shared = (Shared("vec4", "tile_color", slots), Shared("int", "tile_offset", slots)) if threads > 1 else ()
    return Kernel("glint_extract", images=_EXTRACT_IMAGES, constants=_EXTRACT_CONSTANTS, shared=shared,
                  local_size=(threads, threads, 1) if threads > 1 else (32, 32, 1), includes=_LIST_INCLUDE,
                  defines=tuple(defines))


# The seed's four layouts, by the name the benchmark records use (and its figures at 1080p, µs).
EXTRACT_VARIANTS = {
    "texel-serial": extract_kernel(1, serial=True),  # one thread a texel, one thread searching: 360 µs
    "tile-thread": extract_kernel(8),  # one thread per 8x8 tile: 900 µs
    "shared": extract_kernel(1),  # one thread a texel, shared search: 200 µs
    "2x2-shared": extract_kernel(2),  # 2x2 texels a thread, 4x4 threads, shared search: 110 µs
}
SEED_US_1080P = {"texel-serial": 360, "tile-thread": 900, "shared": 200, "2x2-shared": 110}
EXTRACT = EXTRACT_VARIANTS["2x2-shared"]


def extract_for(device: str) -> Kernel:
    """The layout for a GPU: 2x2-shared, except on Mesa's llvmpipe, where every barrier switches
    coroutines per invocation and the barrier-free tile-thread is far faster (bench/README.md, Glints)."""
    return EXTRACT_VARIANTS["tile-thread"] if "llvmpipe" in device.lower() else EXTRACT

SPRITES = Raster(
    "glint_sprites",
    samplers=(Sampler("glint_list"),),
    constants=(
        Constant("IVEC2", "target_size"),
        Constant("INT", "list_width"),
        Constant("VEC4", "glint_shape", components=(  # ray length and thickness in pixels; flare: 1, star: 0
            ("ray_length", "x"), ("ray_rotation", "y"), ("ray_count", "z"), ("flare", "w"))),
        Constant("VEC4", "glint_look", components=(
            ("glint_intensity", "x"), ("glint_threshold", "y"), ("glint_tint", "z"), ("ray_thickness", "w"))),
    ),
    includes=_LIST_INCLUDE,
    defines=(("GLINT_TILE", str(TILE)),),
    varyings=(("VEC3", "v_color"), ("VEC2", "v_offset"), ("VEC2", "v_ray")),
)

ADD = Kernel(
    "glint_add",
    images=(Image("frame", "RGBA32F"),),
    samplers=(Sampler("glints"),),
    constants=(Constant("IVEC2", "target_size"),),
    local_size=(16, 16, 1),
    includes=(),
)

def tiles(width: int, height: int) -> tuple[int, int]:
    return -(-width // TILE), -(-height // TILE)


def ray_thickness(height: int) -> float:
    """Ray thickness in pixels: about one pixel at 1080p, growing with the frame so glints look alike."""
    return max(0.8, 0.8 * height / 1080)


@dataclass(frozen=True)
class BrightPoints:
    """What glint_extract found, in tile order (row by row)."""

    pixels: np.ndarray  # (n, 2) int: x, y
    colors: np.ndarray  # (n, 4) float32: r, g, b, luminance

    def as_set(self) -> set:
        """Order-free form for comparisons: {(tile x, tile y, x, y, r, g, b, luminance)}."""
        return {(int(x) // TILE, int(y) // TILE, int(x), int(y), *map(float, c))
                for (x, y), c in zip(self.pixels, self.colors)}


class GlintStage:
    """The glint list (a slot a tile) and layer for one frame size, and the three steps that use them.

    ``render``: the render settings whose glint fields it draws with (the viewport
    updates them between frames: tweaking a glint re-simulates nothing)."""

    def __init__(self, host, width: int, height: int, render, extract: Kernel | None = None):
        self.host = host
        self.render = render
        self.width, self.height = width, height
        self.extract_kernel = extract or extract_for(host.device)
        tiles_x, tiles_y = tiles(width, height)
        self.capacity = tiles_x * tiles_y
        self.list_width = min(self.capacity, LIST_WIDTH)
        self.list = host.texture("glint_list", 2 * self.list_width, -(-self.capacity // self.list_width), "RGBA32F")
        self.layer = host.texture("glints", width, height, "RGBA16F")

    def extract(self, frame, threshold: float) -> None:
        """The bright points of ``frame`` (the compositor's RGBA32F frame) into the list: every tile writes its slot
        (one dispatch: what the benchmark times)."""
        kernel = self.extract_kernel
        lx, ly, _ = kernel.local_size
        texels = int(dict(kernel.defines)["TEXELS"])
        groups = (-(-self.width // (lx * texels)), -(-self.height // (ly * texels)), 1)
        self.host.dispatch(
            kernel, groups, {"frame": frame, "glint_list": self.list},
            {"target_size": (self.width, self.height), "threshold": float(threshold), "list_width": self.list_width},
        )

    def draw(self) -> None:
        """The glint layer: one sprite per listed point."""
        render = self.render
        self.host.clear(self.layer)
        self.host.draw(
            SPRITES, "TRIS", QUAD_VERTICES * (1 + render.glint_rays), self.capacity, self.layer, None,
            {"glint_list": self.list},
            SPRITES.pack({
                "target_size": (self.width, self.height), "list_width": self.list_width,
                "ray_length": render.glint_length * self.height,
                "ray_rotation": render.glint_rotation, "ray_count": render.glint_rays,
                "flare": 1.0 if render.glints == "FLARE" else 0.0, "glint_intensity": render.glint_intensity,
                "glint_threshold": render.glint_threshold, "glint_tint": render.glint_tint,
                "ray_thickness": ray_thickness(self.height)}),
        )

    def add_to(self, frame) -> None:
        self.host.dispatch(ADD, ADD.groups_for(self.width, self.height), {"frame": frame, "glints": self.layer},
                           {"target_size": (self.width, self.height)})

    def apply(self, frame) -> None:
        """Glints over a finished frame (the compositor's RGBA32F ``frame``)."""
        self.extract(frame, self.render.glint_threshold)
        self.draw()
        self.add_to(frame)

    def read_points(self) -> BrightPoints:
        texels = self.host.read(self.list).reshape(-1, 2, 4)[:self.capacity]  # tile i: texels 2i, 2i + 1, row order
        found = texels[:, 0, 3] > 0.0  # zero luminance: no point in the tile
        return BrightPoints(texels[found, 1, :2].astype(np.int64), texels[found, 0].astype(np.float32))


def wanted(render) -> bool:
    return render.glints != "NONE"


GLINT_FIELDS = tuple(f.name for f in RENDER_FIELDS if f.affects == "glints")

