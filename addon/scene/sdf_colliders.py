"""SDF colliders: each non-analytic collision mesh as a signed distance grid in one atlas, kept across frames.

:func:`~.inputs.colliders` reads a mesh collider as a :class:`ColliderMesh` (its
shape-space triangles: the evaluated mesh mapped by the non-rigid part P of its
world matrix, the rigid part going to the engine's ``Collider.matrix``).
:class:`SdfColliders` builds each mesh's grid with the engine's
:class:`~..engine.sdf.SdfBuilder` into one atlas texture and keeps it while the
shape stays the same: a collider that only moves costs nothing, an edited or
deforming mesh (a changed fingerprint) or a changed scale is built again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from dataclasses import dataclass

import numpy as np

from ..engine.settings.settings import SettingsError
from ..engine.simulate.effectors import Collider
from ..engine.simulate.sdf import SdfAtlas, SdfBuilder, SdfGrid, default_resolution, is_open, mesh_triangles, sdf_grid


@dataclass(frozen=True)
class ColliderMesh:
    """A mesh collider's triangles in its shape space (world units, the object's rigid frame)."""

    name: str
    vertices: np.ndarray  # (n, 3) float32
    triangles: np.ndarray  # (t, 3) int32, wound as in the object (flipped back under a mirror)
    resolution: int  # the object's setting: voxels along the longest side, 0 = Auto
    fingerprint: bytes  # of vertices, triangles and resolution: equal fingerprints, equal grids
    open: bool  # a boundary edge: collided as a surface (sdf.is_open)

    @classmethod
    def of(cls, name: str, vertices: np.ndarray, triangles: np.ndarray, resolution: int) -> ColliderMesh:
        vertices = np.ascontiguousarray(vertices, np.float32)
        triangles = np.ascontiguousarray(triangles, np.int32)
        h = hashlib.blake2b(digest_size=16)
        for part in (vertices, triangles, np.int32(resolution)):
            h.update(np.asarray(part).tobytes())
        h.update(str(vertices.shape).encode())
        return cls(name, vertices, triangles, resolution, h.digest(), is_open(triangles))

    @property
    def extent(self) -> float:
        """The longest side of the mesh's bounds in shape space."""
        return float(np.ptp(self.vertices, axis=0).max())


def polar(linear: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(R, P) with ``linear`` = R @ P, R a proper rotation (det +1); P carries scale, shear and any mirror."""
    u, _, vt = np.linalg.svd(linear)
    rotation = u @ vt
    if np.linalg.det(rotation) < 0:
        rotation = u @ np.diag([1.0, 1.0, -1.0]) @ vt
    return rotation, rotation.T @ linear


@dataclass(frozen=True)
class SdfInfo:
    """What the panel shows of a collider's grid: its size, memory and the last rebuild's cost."""

    dims: tuple[int, int, int]
    nbytes: int
    rebuild_ms: float | None  # None: not measured (the GPU was not waited for)


BUILT: dict[str, SdfInfo] = {}  # by object name: the last grid any simulation built (the sidebar reads it)


class SdfColliders:
    """The SDF colliders' grids of one simulation, in one atlas, rebuilt only when a shape changed.

    ``particle_size``: the smallest particle size of the simulated effects (an Auto resolution's voxel
    follows it).  ``measure``: wait for the GPU around the rebuilds so their time is real (the Stats panel
    asks); otherwise it is the recording's only.  A mesh the builder refuses (too many triangles once split)
    is left out with its message in ``warnings``; an atlas over the GPU's limits is an error.
    """

    def __init__(self, host, particle_size: float):
        self.host = host
        self.particle_size = particle_size
        self.builder = SdfBuilder(host)
        self.measure = False
        self.atlas = None  # the R32F volume the simulation samples
        self.layout: SdfAtlas | None = None
        self._built: dict[str, tuple[bytes, SdfGrid | None]] = {}  # name -> (fingerprint, grid; None: refused)
        self._offsets: dict[str, int] = {}  # name -> z offset in the atlas, of the grids built
        self.rebuilds = 0  # grids built since this simulation started (tests count them)
        self.rebuild_ms = 0.0  # what the last update's rebuilds took
        self.warnings: dict[str, str] = {}  # by collider name: why it was left out

    def resolution(self, mesh: ColliderMesh) -> int:
        return default_resolution(mesh.extent, self.particle_size) if mesh.resolution == 0 else mesh.resolution

    def update(self, colliders: list[Collider], meshes: list[ColliderMesh]) -> list[Collider]:
        """``colliders`` with each SDF collider's grid and atlas offset, built first where its mesh changed
        (those left out dropped)."""
        self.rebuild_ms = 0.0
        if not meshes:
            return list(colliders)
        if [(m.name, m.fingerprint) for m in meshes] != [(n, f) for n, (f, _) in self._built.items()]:
            self._rebuild(meshes)
        return [c if c.type != "SDF" else dataclasses.replace(c, sdf=self._built[c.name][1],
                                                              sdf_z_offset=self._offsets[c.name])
                for c in colliders if c.type != "SDF" or c.name in self._offsets]

    def _rebuild(self, meshes: list[ColliderMesh]) -> None:
        """Build the changed grids (every one when the atlas's layout changes) into the atlas."""
        if self.measure:
            self.host.finish()
        start = time.perf_counter()
        corners = {}  # of the meshes whose grid changed: mesh_triangles' output
        built = {m.name: self._grid(m, corners) for m in meshes}
        kept = [m for m in meshes if built[m.name][1] is not None]
        layout = SdfAtlas([built[m.name][1] for m in kept])
        self._check(layout, {m.name: built[m.name][1] for m in kept})
        fresh = self.layout is None or (layout.shape, layout.z_offsets) != (self.layout.shape, self.layout.z_offsets)
        if fresh:
            self.atlas = self.host.volume("sdf_atlas", shape=layout.shape)
        for mesh, z_offset in zip(kept, layout.z_offsets):
            if fresh or mesh.name in corners:
                grid = built[mesh.name][1]
                triangles = corners.get(mesh.name)
                if triangles is None:
                    triangles = mesh_triangles(mesh.vertices, mesh.triangles, grid, mesh.name)
                self.builder.record(self.builder.upload(triangles), len(triangles), grid, self.atlas, z_offset)
                self.rebuilds += 1
                corners[mesh.name] = triangles
        if self.measure:
            self.host.finish()
        self.rebuild_ms = (time.perf_counter() - start) * 1000
        for mesh in kept:
            if mesh.name in corners:
                grid = built[mesh.name][1]
                BUILT[mesh.name] = SdfInfo(grid.dims, int(np.prod(grid.dims)) * 4,
                                           self.rebuild_ms if self.measure else None)
        self.layout, self._built = layout, built
        self._offsets = {m.name: z for m, z in zip(kept, layout.z_offsets)}

    def _grid(self, mesh: ColliderMesh, corners: dict) -> tuple[bytes, SdfGrid | None]:
        """(fingerprint, grid) of a mesh: the one built while its fingerprint is unchanged, else a new one
        (its triangles into ``corners``); grid None: the builder refuses the mesh."""
        kept = self._built.get(mesh.name)
        if kept is not None and kept[0] == mesh.fingerprint:
            return kept
        try:
            grid = sdf_grid(mesh.vertices, self.resolution(mesh), mesh.name, surface=mesh.open)
            corners[mesh.name] = mesh_triangles(mesh.vertices, mesh.triangles, grid, mesh.name)
        except SettingsError as error:
            self.warnings[mesh.name] = f"{error}: GPU particles ignore it"
            return mesh.fingerprint, None
        self.warnings.pop(mesh.name, None)
        return mesh.fingerprint, grid

    def _check(self, layout: SdfAtlas, kept: dict) -> None:
        """An atlas the GPU cannot hold: the error names the largest collider and its size."""
        try:
            layout.check(self.host.max_texture_3d_size)
        except SettingsError as error:
            name, grid = max(kept.items(), key=lambda item: np.prod(item[1].dims))
            raise SettingsError(f"{error} (the largest: collider '{name}', {'x'.join(map(str, grid.dims))} voxels, "
                                "SDF Resolution in its GPU Particles Collider panel)") from None
