"""Signed distance fields of collider meshes, built on the GPU (issue 30).

A collider's SDF is a grid of voxels in its shape space (object space mapped by the scale part of its
matrix: values are world units); voxel (i, j, k) holds the signed distance (negative inside) at its centre
``origin + (i + 0.5, j + 0.5, k + 0.5) * voxel``.  Every SDF collider of an effect lives in one R32F 3D
texture, stacked along z (:class:`SdfAtlas`).  :class:`SdfBuilder` builds one grid in six kernels::

    sdf_clear                           # scratch volumes: no distance, no triangle, no crossing
    sdf_band(stage DISTANCE, NEAREST)   # narrow band: exact distances near each triangle, nearest id
    sdf_crossings                       # each axis' columns of voxel centres that cross each triangle (closed)
    sdf_winding                         # running winding number of the crossings along each column (closed)
    sdf_flood(jump = N/2 ... 1, 1)      # jump flooding of the nearest triangle over the whole grid
    sdf_write                           # exact distance to that triangle, signed by the axes' vote (closed)
                                        # or by its side: the slab behind an open surface

Why this plan: the exact nearest triangle per voxel by brute force is O(voxels x triangles) (2M x 100K);
a BVH per voxel is the CPU peer's way and branchy on a GPU.  The narrow band costs O(triangles) with a
workgroup per triangle, exact where it matters most (near the surface); jump flooding (plus one extra
1-step) spreads it in log2(N) + 1 passes of 27 exact point-triangle distances per voxel: only *which*
triangle is nearest can be wrong far from the surface, and then by a small margin, never the distance to
the triangle chosen.  Triangles whose bounding box spans more than ``SPLIT_VOXELS`` voxels are split into
four (recursively, on the CPU) before upload, so a ground-plane triangle does not leave one workgroup
looping over 256 x 256 voxels while the others wait; the split triangles cover the same surface.

The sign comes from winding numbers along x, y and z, counted exactly (edge functions with a top-left rule: a
column through a shared edge or corner meets one triangle there), and a vote of the three axes.  Each triangle
a column crosses counts +1 or -1 by the way it faces along the axis (the sign of its projected area), so the
sum along the column from the grid's start is the winding number of the ray to a voxel's centre, and a voxel
is inside where it is not 0 (the nonzero rule).  Why not parity: where closed shells overlap (Suzanne's eyes
sink into its head) a voxel inside both is crossed twice along every axis, and parity calls it outside; its
winding number is 2.  Inward (flipped) normals and mirrored objects negate every winding number, so the
nonzero rule gives the same field.  A column whose crossings do not sum to 0 in all (through a hole, past the
rim of an open sheet) abstains, since the rays from its two ends disagree: a hole smaller than the mesh only
silences the columns through it and the axes that voted decide, inside on a tie (one in, one out: a closed
column is wrong mostly where it passes two holes, which makes it say outside; Suzanne's eye sockets).  A
voxel where all three abstain, or none says inside, is outside: a single open sheet comes out unsigned.
The counts live in one R32UI word per voxel, ``AXIS_BITS`` per axis: crossings facing along the axis and
those facing against it, ``CROSSING_BITS`` each, kept apart so they only grow and can saturate (a compare-and-
swap stops a count at ``CROSSING_LIMIT`` instead of carrying into its neighbour): the counts come out the same
in any order, and a column with a saturated count (31 layers of surface facing one way within one voxel)
abstains.
(Where a split triangle meets an unsplit neighbour, the midpoint on their edge is rounded: a column through
that point, a float's width from the edge, is the rare one that may miscount; it then abstains.)
An open mesh (a boundary edge: a terrain, a sheet, a mesh with holes; :func:`is_open`) encloses nothing, so its
winding numbers mean nothing and an unsigned distance would be a valley at the sheet (its trilinear samples half
a voxel off, its gradient pointing through the sheet): it is built as a thin solid, the slab within
``SURFACE_SHELL_VOXELS`` behind its faces (``SdfGrid.surface``; the build skips sdf_crossings and sdf_winding).
sdf_write takes the side of the nearest triangle's plane: in front, the distance; behind, the signed distance to
the slab (negative within it, the shell less the distance beyond it).  The field is then continuous and
1-Lipschitz across the sheet, so simulate.glsl collides it as any closed mesh: a particle in front is stopped
before it reaches the surface, one behind the slab before it reaches the slab's back face, and neither crosses
within a step (the trace, as for a 1 cm wall at 100 m/s); a particle inside the slab is pushed out of its
nearer face.  Past a sheet's rim the plane's side is arbitrary: behind the plane's extension the field drops by
the shell, a lip of at most the shell around the rim.  Its grid has SURFACE_MARGIN_VOXELS of margin, so that
the slab's back face, like any surface, lies MARGIN_VOXELS inside the grid's box.
Generalized winding numbers would be robust to any hole but cost O(voxels x triangles) (or a hierarchy we
do not have on the GPU); the reference (reference/simulate/sdf.py) uses them as the ground truth of the tests.

Bad input: zero-area triangles are dropped; a mesh with none left, or with non-finite or flat-to-a-point
bounds, raises :class:`SettingsError` naming the object; so does a mesh over ``MAX_TRIANGLES`` (after
splitting: the upload's size and the build's time grow with it) and an atlas over ``SDF_MEMORY_BUDGET``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..seam.kernels import Constant, Image, Kernel
from ..settings.settings import SettingsError

MIN_RESOLUTION = 32  # voxels along a grid's longest side
MAX_RESOLUTION = 256
MARGIN_VOXELS = 2  # voxels around the mesh's bounds (particles see the surface before they reach it)
MAX_TRIANGLES = 6_000_000  # after splitting: 3 RGBA32F texels each (288 MB at the cap)
SPLIT_VOXELS = 8  # triangles longer than this along an axis (in voxels) are split into four
SDF_MEMORY_BUDGET = 1 << 30  # bytes of the atlas of one effect
TRIANGLE_WIDTH = 4096  # texels per row of the triangle image (3 per triangle)
NO_TRIANGLE = 0xFFFFFFFF  # a voxel the flood has not reached
BAND_THREADS = 64
AXIS_BITS = 10  # sdf_winding: axis a's field is bits 10a..10a+9 (see sdf_crossings.glsl and sdf_winding.glsl)
CROSSING_BITS = 5  # a field's crossings facing along its axis (low 5 bits), then those facing against it
CROSSING_LIMIT = (1 << CROSSING_BITS) - 1  # a count that reaches it stays (saturates): its column abstains
SURFACE_SHELL_VOXELS = 2.0  # an open surface's slab behind its faces (sdf_write)
SURFACE_MARGIN_VOXELS = MARGIN_VOXELS + 2  # an open surface's: MARGIN_VOXELS around its slab too
VOTES = {"INSIDE": 1, "ABSTAIN": 2}  # a field once sdf_winding has run: its axis' vote at that voxel
STAGES = {"DISTANCE": 0, "NEAREST": 1}

_DEFINES = (
    ("SDF_TRIANGLE_WIDTH", str(TRIANGLE_WIDTH)), ("SDF_NO_TRIANGLE", f"{NO_TRIANGLE}u"),
    ("SDF_BAND_THREADS", str(BAND_THREADS)), ("SDF_AXIS_BITS", str(AXIS_BITS)),
    ("SDF_CROSSING_BITS", str(CROSSING_BITS)), ("SDF_CROSSING_LIMIT", f"{CROSSING_LIMIT}u"),
    ("SDF_SURFACE_SHELL", repr(SURFACE_SHELL_VOXELS)),
    *((f"SDF_STAGE_{name}", str(value)) for name, value in STAGES.items()),
    *((f"SDF_VOTE_{name}", f"{value}u") for name, value in VOTES.items()),
)
_INCLUDES = ("common.glsl", "sdf_common.glsl")
_TRIANGLES = Image("sdf_triangles", "RGBA32F", "READ")
_VOLUME_GROUP = (4, 4, 4)


def _kernel(name, images, constants=(), local_size=(BAND_THREADS, 1, 1)) -> Kernel:
    return Kernel(name, images=(_TRIANGLES, *images), constants=constants, local_size=local_size,
                  includes=_INCLUDES, defines=_DEFINES)


SDF_CLEAR = Kernel("sdf_clear", images=tuple(Image(name, "R32UI", "WRITE", dimensions=3)
                                             for name in ("sdf_distance", "sdf_nearest", "sdf_winding")),
                   local_size=_VOLUME_GROUP, defines=_DEFINES)
SDF_BAND = _kernel("sdf_band", (Image("sdf_distance", "R32UI", atomic=True, dimensions=3),
                                Image("sdf_nearest", "R32UI", atomic=True, dimensions=3)),
                   (Constant("INT", "triangle_count"), Constant("INT", "stage")))
SDF_CROSSINGS = _kernel("sdf_crossings", (Image("sdf_winding", "R32UI", atomic=True, dimensions=3),),
                        (Constant("INT", "triangle_count"),))
SDF_WINDING = Kernel("sdf_winding", images=(Image("sdf_winding", "R32UI", atomic=True, dimensions=3),),
                     local_size=(BAND_THREADS, 1, 1), defines=_DEFINES)
SDF_FLOOD = _kernel("sdf_flood", (Image("flood_from", "R32UI", "READ", dimensions=3),
                                  Image("flood_to", "R32UI", "WRITE", dimensions=3)),
                    (Constant("INT", "jump"),), _VOLUME_GROUP)
SDF_WRITE = _kernel("sdf_write", (Image("sdf_nearest", "R32UI", "READ", dimensions=3),
                                  Image("sdf_winding", "R32UI", "READ", dimensions=3),
                                  Image("sdf_atlas", "R32F", "WRITE", dimensions=3)),
                    (Constant("INT", "z_offset"), Constant("FLOAT", "voxel_size"), Constant("INT", "surface")),
                    _VOLUME_GROUP)
SDF_KERNELS = (SDF_CLEAR, SDF_BAND, SDF_CROSSINGS, SDF_WINDING, SDF_FLOOD, SDF_WRITE)


@dataclass(frozen=True)
class SdfGrid:
    """Where a collider's voxels are in its shape space (see the module docstring)."""

    origin: tuple[float, float, float]
    voxel: float
    dims: tuple[int, int, int]
    surface: bool = False  # an open mesh: built as the slab behind its faces (module docstring)

    def to_grid(self, points: np.ndarray) -> np.ndarray:
        """Shape-space points in voxel-centre coordinates (voxel (i, j, k)'s centre is (i, j, k)), float32."""
        return ((np.asarray(points, np.float32) - np.asarray(self.origin, np.float32)) / np.float32(self.voxel)
                - np.float32(0.5)).astype(np.float32)

    def centres(self) -> np.ndarray:
        """Every voxel centre in shape space, (nz, ny, nx, 3) (x fastest, as the atlas stores them)."""
        k, j, i = np.indices(self.dims[::-1], dtype=np.float64)
        return np.asarray(self.origin) + (np.stack([i, j, k], axis=-1) + 0.5) * self.voxel


def default_resolution(extent: float, particle_size: float) -> int:
    """Voxels along the longest side: one per particle size, within [MIN_RESOLUTION, MAX_RESOLUTION]."""
    if not (extent > 0 and particle_size > 0 and math.isfinite(extent / particle_size)):
        return MIN_RESOLUTION
    return int(np.clip(math.ceil(extent / particle_size), MIN_RESOLUTION, MAX_RESOLUTION))


def is_open(triangles: np.ndarray) -> bool:
    """Whether a mesh has a boundary edge (one that a single triangle uses): it encloses nothing, so it is
    built as a surface (module docstring).  Edges count by vertex index, either way round (a mirror winds back)."""
    triangles = np.asarray(triangles, np.int64).reshape(-1, 3)
    if not len(triangles):
        return False
    start, end = triangles.ravel(), triangles[:, [1, 2, 0]].ravel()
    edges = np.sort(np.minimum(start, end) * (int(triangles.max()) + 1) + np.maximum(start, end))
    runs = np.diff(np.flatnonzero(np.concatenate([[True], edges[1:] != edges[:-1], [True]])))
    return bool((runs == 1).any())


def sdf_grid(vertices: np.ndarray, resolution: int, name: str = "the mesh", surface: bool = False) -> SdfGrid:
    """The grid around shape-space ``vertices`` with ``resolution`` voxels along its longest side (margins
    included; the product keeps it in [MIN_RESOLUTION, MAX_RESOLUTION], tests go lower), of an open mesh's
    ``surface`` or not; a clear error for bounds that are not finite or are a single point."""
    margin = SURFACE_MARGIN_VOXELS if surface else MARGIN_VOXELS
    if resolution <= 2 * margin:
        raise ValueError(f"an SDF grid needs more than {2 * margin} voxels a side, not {resolution}")
    vertices = np.asarray(vertices, np.float64).reshape(-1, 3)
    if not len(vertices) or not np.isfinite(vertices).all():
        raise SettingsError(f"Collider '{name}': its mesh has no vertices or non-finite ones (zero scale?)")
    low, high = vertices.min(axis=0), vertices.max(axis=0)
    longest = float((high - low).max())
    if not longest > 1e-7 * max(1.0, float(np.abs(vertices).max())):
        raise SettingsError(f"Collider '{name}': its mesh has zero size (zero scale?): no SDF to build")
    voxel = longest / (resolution - 2 * margin)
    dims = np.maximum(np.ceil((high - low) / voxel - 1e-6).astype(int), 1) + 2 * margin
    origin = low - margin * voxel
    return SdfGrid(tuple(map(float, origin)), voxel, tuple(int(n) for n in np.minimum(dims, resolution)), surface)


def mesh_triangles(vertices: np.ndarray, triangles: np.ndarray, grid: SdfGrid, name: str = "the mesh") -> np.ndarray:
    """(T, 3, 3) float32 corners in the grid's voxel-centre coordinates: zero-area triangles dropped, long
    ones split (module docstring); a clear error when none is left or too many are."""
    indices = np.asarray(triangles, np.int64).ravel()
    corners = np.take(grid.to_grid(np.asarray(vertices, np.float32).reshape(-1, 3)), indices, axis=0).reshape(-1, 3, 3)
    if not np.isfinite(corners).all():
        raise SettingsError(f"Collider '{name}': its mesh has non-finite vertices (zero or huge scale?)")
    with_area = doubled_area(corners[:, 0], corners[:, 1], corners[:, 2]) > 1e-12
    if not with_area.all():  # copies only where something is dropped (a deforming mesh rebuilds every frame)
        corners = corners[with_area]
    if not len(corners):
        raise SettingsError(f"Collider '{name}': its mesh has no faces with area (an SDF collider needs faces)")
    kept, long, kept_count = [], corners, 0
    while len(long):
        split = (_spans(long) > SPLIT_VOXELS).any(axis=1)
        splitting = int(split.sum())
        if kept_count + len(long) + 3 * splitting > MAX_TRIANGLES:
            raise SettingsError(f"Collider '{name}': {len(triangles):,} triangles are more than an SDF collider "
                                f"takes ({MAX_TRIANGLES:,} after splitting large ones): decimate the mesh or use a "
                                "lower-poly proxy")
        if not splitting:
            kept.append(long)
            break
        kept.append(long[~split])
        kept_count += len(kept[-1])
        long = _split_in_four(long[split])
    return kept[0] if len(kept) == 1 else np.concatenate(kept)


def doubled_area(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """|(b - a) x (c - a)| per triangle of corner rows a, b, c, written out (np.cross and reductions over an
    axis of 3 are slow)."""
    u, v = b - a, c - a
    x = u[:, 1] * v[:, 2] - u[:, 2] * v[:, 1]
    y = u[:, 2] * v[:, 0] - u[:, 0] * v[:, 2]
    z = u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0]
    return np.sqrt(x * x + y * y + z * z)


def _spans(corners: np.ndarray) -> np.ndarray:
    """Each triangle's bounding-box size per axis, (T, 3)."""
    a, b, c = corners[:, 0], corners[:, 1], corners[:, 2]
    return np.maximum(np.maximum(a, b), c) - np.minimum(np.minimum(a, b), c)


def _split_in_four(corners: np.ndarray) -> np.ndarray:
    """Each triangle as its four midpoint triangles (midpoints computed alike for an edge's two triangles)."""
    a, b, c = corners[:, 0], corners[:, 1], corners[:, 2]
    ab, bc, ca = (a + b) * np.float32(0.5), (b + c) * np.float32(0.5), (c + a) * np.float32(0.5)
    return np.concatenate([np.stack(t, axis=1) for t in ((a, ab, ca), (ab, b, bc), (ca, bc, c), (ab, bc, ca))])


@dataclass(frozen=True)
class SdfAtlas:
    """Grids stacked along z in one R32F 3D texture: width = max nx, height = max ny, depth = sum of nz."""

    grids: tuple[SdfGrid, ...]

    def __init__(self, grids):
        object.__setattr__(self, "grids", tuple(grids))

    @property
    def z_offsets(self) -> tuple[int, ...]:
        return tuple(int(z) for z in np.cumsum([0] + [g.dims[2] for g in self.grids])[:-1])

    @property
    def shape(self) -> tuple[int, int, int]:
        """(depth, height, width), as ``Host.volume(shape=)`` takes it."""
        if not self.grids:
            return (1, 1, 1)
        return (sum(g.dims[2] for g in self.grids), max(g.dims[1] for g in self.grids),
                max(g.dims[0] for g in self.grids))

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape)) * 4

    def check(self, max_texture_3d_size: int) -> None:
        """A clear error for an atlas the GPU cannot hold: deeper than a 3D texture or over the budget."""
        depth, height, width = self.shape
        if depth > max_texture_3d_size or self.nbytes > SDF_MEMORY_BUDGET:
            raise SettingsError(
                f"SDF colliders need a {width}x{height}x{depth} atlas ({self.nbytes / 2**20:,.0f} MiB): over the "
                f"GPU's {max_texture_3d_size}-texel 3D textures or the {SDF_MEMORY_BUDGET / 2**20:,.0f} MiB SDF "
                "budget; lower the colliders' SDF resolution")


class SdfBuilder:
    """Builds grids into an atlas on a host; keeps its scratch volumes between builds of the same size."""

    def __init__(self, host):
        self.host = host
        self._scratch: dict[tuple[int, int, int], dict] = {}

    def build(self, vertices: np.ndarray, triangles: np.ndarray, grid: SdfGrid, atlas, z_offset: int,
              name: str = "the mesh") -> None:
        """Record the build of ``grid`` from shape-space ``vertices`` and ``triangles`` (T, 3) into the
        ``atlas`` texture at ``z_offset``."""
        corners = mesh_triangles(vertices, triangles, grid, name)
        self.record(self.upload(corners), len(corners), grid, atlas, z_offset)

    def upload(self, corners: np.ndarray):
        """The triangle image of (T, 3, 3) grid-space corners."""
        rows = -(-len(corners) * 3 // TRIANGLE_WIDTH)
        texels = np.zeros((rows * TRIANGLE_WIDTH, 4), np.float32)  # one array, padded: 1M triangles copied once
        texels[:len(corners) * 3, :3] = corners.reshape(-1, 3)
        return self.host.texture("sdf_triangles", TRIANGLE_WIDTH, rows, "RGBA32F", texels)

    def record(self, triangles, count: int, grid: SdfGrid, atlas, z_offset: int) -> None:
        """The dispatches of one build from ``count`` uploaded triangles (the benchmark times these)."""
        host = self.host
        scratch = self._volumes(grid.dims)
        volume_groups = tuple(-(-n // g) for n, g in zip(grid.dims, _VOLUME_GROUP))
        host.dispatch(SDF_CLEAR, volume_groups, {name: scratch[name] for name in ("sdf_distance", "sdf_nearest",
                                                                                 "sdf_winding")}, {})
        per_triangle = _triangle_groups(count, host.max_work_group_count)
        band = {"sdf_triangles": triangles, "sdf_distance": scratch["sdf_distance"],
                "sdf_nearest": scratch["sdf_nearest"]}
        for stage in STAGES.values():
            host.dispatch(SDF_BAND, per_triangle, band, {"triangle_count": count, "stage": stage})
        winding = {"sdf_winding": scratch["sdf_winding"]}
        if not grid.surface:  # an open surface's winding numbers mean nothing: sdf_write signs it by its faces
            host.dispatch(SDF_CROSSINGS, per_triangle, {"sdf_triangles": triangles, **winding},
                          {"triangle_count": count})
            nx, ny, nz = grid.dims
            columns = max(ny * nz, nz * nx, nx * ny)
            host.dispatch(SDF_WINDING, (-(-columns // BAND_THREADS), 3, 1), winding, {})
        nearest, spare = scratch["sdf_nearest"], scratch["sdf_flood"]
        for jump in flood_jumps(grid.dims):
            host.dispatch(SDF_FLOOD, volume_groups, {"sdf_triangles": triangles, "flood_from": nearest,
                                                     "flood_to": spare}, {"jump": jump})
            nearest, spare = spare, nearest
        host.dispatch(SDF_WRITE, volume_groups,
                      {"sdf_triangles": triangles, "sdf_nearest": nearest, **winding, "sdf_atlas": atlas},
                      {"z_offset": z_offset, "voxel_size": grid.voxel, "surface": int(grid.surface)})

    def _volumes(self, dims: tuple[int, int, int]) -> dict:
        if dims not in self._scratch:
            shape = dims[::-1]
            self._scratch = {dims: {name: self.host.volume(name, shape=shape, format="R32UI")
                                    for name in ("sdf_distance", "sdf_nearest", "sdf_flood", "sdf_winding")}}
        return self._scratch[dims]


def flood_jumps(dims: tuple[int, int, int]) -> list[int]:
    """Jump flooding's steps: halving from the power of two at or above half the longest side, then 1 again."""
    jump = 1 << max(0, (max(dims) - 1).bit_length() - 1)
    jumps = []
    while jump >= 1:
        jumps.append(jump)
        jump //= 2
    return [*jumps, 1]


def _triangle_groups(count: int, max_groups: int) -> tuple[int, int, int]:
    """One workgroup per triangle, spread over x and y (a dispatch takes at most ``max_groups`` along each)."""
    width = min(count, max_groups, 32768)
    return (width, -(-count // width), 1)
