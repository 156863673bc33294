"""CSG point clouds: surface samples of add/subtract primitives, kept by test, scan, compact.

When primitives are appended to the stack, only they get new samples::

    csg_generate(primitives[first:last] -> samples after the kept ones)
    csg_keep(samples -> keep_flags)         # mode A for kept samples, B.1 / B.2 for new ones
    scan(keep_flags -> offsets, total=sample_count)
    csg_compact(samples, keep_flags, offsets -> kept)   # position and attributes together

Any other change (a primitive moved, removed, reordered) rebuilds the stack from
its first primitive.  The sample count lives on the GPU (``sample_count``, 1x1);
dispatches cover a host-side upper bound and return early past the count.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..primitives.scan import Scan
from ..seam.kernels import Constant, Image, Kernel
from ..seam.records import CSG_PRIMITIVE
from ..seam.state import LAYOUTS
from ..seam.tables import CSG_MODES, CSG_SHAPES, SIZES
from ..settings.settings import SettingsError

MAX_PRIMITIVES = 1024  # each new sample loops over the primitives before it
SHAPES = tuple(key for key, _ in CSG_SHAPES.values)
MODES = tuple(key for key, _ in CSG_MODES.values)
SAMPLE_WIDTH = 4096  # sample images are SAMPLE_WIDTH wide (a multiple of one workgroup)

_PRIMITIVES = Image("primitives", "RGBA32F", "READ")
_COUNT = Image("sample_count", "R32UI", "READ")
_RANGE = (Constant("INT", "first"), Constant("INT", "last"), Constant("INT", "samples_per_primitive"))
_INCLUDES = ("common.glsl", "random.glsl", "csg_common.glsl")

CSG_GENERATE = Kernel(
    "csg_generate",
    images=(_PRIMITIVES, _COUNT, Image("sample_pos", "RGBA32F", "WRITE"), Image("sample_attr", "RGBA32F", "WRITE")),
    constants=(*_RANGE, Constant("INT", "seed"), Constant("INT", "dispatch_width")),
    includes=_INCLUDES,
)

CSG_KEEP = Kernel(
    "csg_keep",
    images=(_PRIMITIVES, _COUNT, Image("sample_pos", "RGBA32F", "READ"), Image("keep_flags", "R32UI", "WRITE")),
    constants=(*_RANGE, Constant("INT", "bound")),
    includes=_INCLUDES,
)

CSG_COMPACT = Kernel(
    "csg_compact",
    images=(
        Image("sample_pos", "RGBA32F", "READ"), Image("sample_attr", "RGBA32F", "READ"),
        Image("keep_flags", "R32UI", "READ"), Image("offsets", "R32UI", "READ"),
        Image("kept_pos", "RGBA32F", "WRITE"), Image("kept_attr", "RGBA32F", "WRITE"),
    ),
    constants=(Constant("INT", "bound"),),
)

CSG_POINTS = Kernel(
    "csg_points",
    images=(
        _COUNT, Image("sample_pos", "RGBA32F", "READ"), Image("sample_attr", "RGBA32F", "READ"),
        Image("pos_age", "RGBA32F", "WRITE"), Image("vel_life", "RGBA32F", "WRITE"),
    ),
    constants=(Constant("INT", "bound"), Constant("FLOAT", "time"), 
               Constant("VEC2", "noise", components=(("glitter_amount", "x"), ("glitter_speed", "y"))),
               Constant("VEC4", "light")),  # xyz: unit direction
    includes=("common.glsl", "random.glsl"),
)

CSG_KERNELS = (CSG_GENERATE, CSG_KEEP, CSG_COMPACT, CSG_POINTS)


class CSGError(SettingsError):
    """A primitive stack or sample budget the effect cannot build; nothing was changed."""


@dataclass(frozen=True)
class Primitive:
    shape: str  # 'SPHERE' or 'BOX'
    mode: str  # 'ADD' or 'SUBTRACT'
    center: tuple[float, float, float]
    size: tuple[float, float, float]  # spheres: (radius, radius, radius); boxes: half extents
    color: tuple[float, float, float] = (1.0, 1.0, 1.0)
    name: str = ""

    @property
    def code(self) -> float:
        return float(CSG_SHAPES[self.shape] + SIZES["CSG_SHAPE_COUNT"] * CSG_MODES[self.mode])


def sphere(center, radius, mode="ADD", color=(1.0, 1.0, 1.0), name="") -> Primitive:
    return Primitive("SPHERE", mode, tuple(center), (radius,) * 3, tuple(color), name)


def box(center, half_extents, mode="ADD", color=(1.0, 1.0, 1.0), name="") -> Primitive:
    return Primitive("BOX", mode, tuple(center), tuple(half_extents), tuple(color), name)


def check_primitives(primitives: list[Primitive]) -> list[str]:
    """Raise CSGError on a stack the kernels cannot take; return warnings about odd ones."""
    if len(primitives) > MAX_PRIMITIVES:
        raise CSGError(f"{len(primitives)} CSG primitives are more than the kernels' budget of {MAX_PRIMITIVES}")
    for index, p in enumerate(primitives):
        label = p.name or f"primitive {index}"
        if p.shape not in SHAPES or p.mode not in MODES:
            raise CSGError(f"{label}: shape must be one of {SHAPES} and mode one of {MODES}")
        if not all(math.isfinite(v) for v in (*p.center, *p.size, *p.color)):
            raise CSGError(f"{label}: position and size must be finite numbers")
        if min(p.size) <= 0:
            raise CSGError(f"{label}: size must be positive, not {min(p.size):g}")
    if primitives and primitives[0].mode == "SUBTRACT":
        label = primitives[0].name or "the first primitive"
        return [f"{label} subtracts from nothing: it adds no samples (put an additive primitive first)"]
    return []


def check_batch(primitive_count: int, samples_per_primitive: int, capacity: int, kept: int = 0) -> None:
    """Refuse a batch whose new samples (before culling) could overflow the sample images."""
    added = primitive_count * samples_per_primitive
    if kept + added > capacity:
        raise CSGError(
            f"{kept:,} kept + {added:,} new samples exceed the capacity of {capacity:,} "
            "(fewer samples per primitive, or a larger capacity)"
        )


def sample_capacity_limit(max_texture_size: int) -> int:
    return SAMPLE_WIDTH * max_texture_size


class PointCloud:
    """The kept surface samples of a primitive stack, on the GPU, double-buffered."""

    def __init__(self, host, capacity: int, samples_per_primitive: int, seed: int = 0):
        if samples_per_primitive < 1:
            raise CSGError(f"samples per primitive must be at least 1, not {samples_per_primitive}")
        limit = sample_capacity_limit(host.max_texture_size)
        if not 1 <= capacity <= limit:
            raise CSGError(f"sample capacity {capacity:,} is beyond this GPU's texture limits (1 to {limit:,})")
        self.host = host
        self.capacity = capacity
        self.samples_per_primitive = samples_per_primitive
        self.seed = seed
        rows = -(-capacity // SAMPLE_WIDTH)
        self.width, self.rows = SAMPLE_WIDTH, rows
        self.buffers = [
            {name: host.texture(name, SAMPLE_WIDTH, rows, "RGBA32F") for name in ("pos", "attr")} for _ in range(2)
        ]
        self.keep_flags = host.texture("keep_flags", SAMPLE_WIDTH, rows, "R32UI")
        self.offsets = host.texture("offsets", SAMPLE_WIDTH, rows, "R32UI")
        self.sample_count = host.texture("sample_count", 1, 1, "R32UI")
        self.scan = Scan(host, capacity)
        self.primitives: list[Primitive] = []
        self.primitive_image = None
        self.bound = 0  # upper bound of the sample count, known without reading back
        self.warnings: list[str] = []

    @property
    def samples(self) -> dict:
        return self.buffers[0]

    def update(self, primitives: list[Primitive]) -> None:
        """Follow the stack: appended primitives incrementally, any other change by a rebuild."""
        primitives = list(primitives)
        self.warnings = check_primitives(primitives)
        if primitives == self.primitives:
            return
        appended = primitives[: len(self.primitives)] == self.primitives
        first = len(self.primitives) if appended else 0
        if first == 0:
            check_batch(len(primitives), self.samples_per_primitive, self.capacity)
            self.host.clear(self.sample_count)
            self.bound = 0
        else:
            self._check_room(len(primitives) - first)
        self.upload(primitives)
        self.primitives = primitives
        if len(primitives) > first:
            self.add(first, len(primitives))

    def _check_room(self, primitive_count: int) -> None:
        """Room for a batch after the kept samples; the kept count read back only when the bound is too loose."""
        added = primitive_count * self.samples_per_primitive
        if self.bound + added > self.capacity:
            self.bound = self.read_count()  # one sync
        check_batch(primitive_count, self.samples_per_primitive, self.capacity, self.bound)

    def upload(self, primitives: list[Primitive]) -> None:
        """The stack as the ``primitives`` image the kernels read (no samples change)."""
        rows = CSG_PRIMITIVE.pack_rows([{"center": p.center, "code": p.code, "size": p.size, "color": p.color}
                                        for p in primitives])
        table = np.ascontiguousarray(rows.transpose(1, 0, 2))  # a primitive a column, a texel a row
        self.primitive_image = self.host.texture("primitives", table.shape[1], CSG_PRIMITIVE.texels, "RGBA32F", table)

    def add(self, first: int, last: int) -> None:
        """The recording for primitives [first, last) appended to the stack."""
        added = (last - first) * self.samples_per_primitive
        bound = self.bound + added
        src, dst = self.buffers
        span = {"first": first, "last": last, "samples_per_primitive": self.samples_per_primitive}
        common = {"primitives": self.primitive_image, "sample_count": self.sample_count}
        groups_x = min(-(-added // 256), 65535)
        self.host.dispatch(
            CSG_GENERATE, (groups_x, -(-added // (groups_x * 256)), 1),
            {**common, "sample_pos": src["pos"], "sample_attr": src["attr"]},
            {**span, "seed": self.seed, "dispatch_width": groups_x * 256},
        )
        groups = CSG_KEEP.groups_for(self.width, -(-bound // self.width))
        self.host.dispatch(
            CSG_KEEP, groups, {**common, "sample_pos": src["pos"], "keep_flags": self.keep_flags},
            {**span, "bound": bound},
        )
        self.scan.run(self.keep_flags, self.offsets, bound, total=self.sample_count)
        self.host.dispatch(
            CSG_COMPACT, groups,
            {"sample_pos": src["pos"], "sample_attr": src["attr"], "keep_flags": self.keep_flags,
             "offsets": self.offsets, "kept_pos": dst["pos"], "kept_attr": dst["attr"]},
            {"bound": bound},
        )
        self.buffers.reverse()
        self.bound = bound

    def write_points(self, state: dict, time: float, noise_amount: float, noise_speed: float, light) -> None:
        """Write the samples into splat state images (``pos_age``, ``vel_life``)."""
        self.host.dispatch(
            CSG_POINTS, CSG_POINTS.groups_for(self.width, max(-(-self.bound // self.width), 1)),
            {"sample_count": self.sample_count, "sample_pos": self.samples["pos"],
             "sample_attr": self.samples["attr"], **state},
            {"bound": self.bound, "time": time, "noise": (noise_amount, noise_speed), "light": (*light, 0.0)},
        )

    def read_count(self) -> int:
        """The kept sample count, read back (a GPU sync: stats, export)."""
        return int(self.host.read(self.sample_count)[0, 0])

    def read(self) -> tuple[np.ndarray, np.ndarray]:
        """(positions with primitive index, normals with packed color) of the kept samples, (n, 4)."""
        n = self.read_count()
        return tuple(self.host.read(self.samples[k]).reshape(-1, 4)[:n] for k in ("pos", "attr"))


def unpack_colors(attr: np.ndarray) -> np.ndarray:
    """The (n, 3) float colors packed in ``attr[:, 3]``."""
    packed = attr[:, 3].astype(np.uint32)
    return np.stack([(packed >> s) & 0xFF for s in (0, 8, 16)], axis=1).astype(np.float32) / 255


class CloudParticles:
    """The cloud as splat particles: what ``Compositor.splat`` draws (a particle system's shape).

    ``settings`` gives the splat its look: color_start where the light falls,
    color_end facing away, emission_strength and size.
    """

    layout = LAYOUTS["FULL"]  # world positions in RGBA32F (simulation.py's state layouts)
    origin = np.zeros(3, np.float32)
    ramp = None  # color_start to color_end (look.py)
    trails = None  # no trails (trails.py)

    def __init__(self, cloud: PointCloud, settings):
        self.cloud = cloud
        self.settings = settings
        self.pos_age = cloud.host.texture("pos_age", cloud.width, cloud.rows, "RGBA32F")
        self.vel_life = cloud.host.texture("vel_life", cloud.width, cloud.rows, "RGBA32F")

    @property
    def textures(self) -> dict:
        return {"pos_age": self.pos_age, "vel_life": self.vel_life}

    @property
    def count(self) -> int:
        return self.cloud.bound

    @property
    def groups(self) -> tuple[int, int, int]:
        return CSG_POINTS.groups_for(self.cloud.width, max(-(-self.cloud.bound // self.cloud.width), 1))

    def update(self, time: float, noise_amount: float = 0.0, noise_speed: float = 0.0, light=(0.3, -0.5, 0.8)) -> None:
        light = np.asarray(light, np.float64)
        self.cloud.write_points(self.textures, time, noise_amount, noise_speed, light / np.linalg.norm(light))
