"""Scene inputs as plain data: force fields, colliders and emitter meshes.

The Blender glue (``addon/scene/inputs.py``) reads objects into these each
frame; the simulate kernel reads force fields and emitter triangles from small
RGBA32F images (one row per field, four texels per triangle) and colliders from
uniform rows built per dispatch (``collider_rows``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..seam.records import COLLIDER, FORCE_FIELD, TRIANGLE
from ..seam.tables import COLLIDER_TYPES, FIELD_TYPES, SIZES

if TYPE_CHECKING:
    from .sdf import SdfGrid

MAX_FORCE_FIELDS = 16
MAX_COLLIDERS = SIZES["MAX_COLLIDERS"]
# SDF colliders (simulate.glsl sdf_contact), in voxels of the collider's grid: the least contact distance
# (over the half voxel a sampled sheet may keep), the sphere trace's smallest step (well under the band
# that contact distance makes around the thinnest sheet) and how much closer than where it started a
# particle already within the contact distance must come to touch again (so that sliding is no contact).
SDF_CONTACT_VOXELS = 0.75
SDF_STEP_VOXELS = 0.25
SDF_SLACK_VOXELS = 0.05
SDF_TRACE_STEPS = 32  # sphere-trace samples along a step's segment, then the safe fallback
# The trace samples the distance through the texture unit's filter (sdf_sample.glsl sdf_distance), whose weights
# have few bits (8 on NVIDIA: off by up to 1/256 along each axis, so a 1-Lipschitz field by 3/256 voxel), and
# every sample keeps SDF_EDGE_VOXELS inside the grid's outer voxel centres, more than the unit's rounding of a
# coordinate (2^-24 of the atlas's depth, at most 4096 texels), so that it never blends in the next grid of the
# atlas.  SDF_FILTER_VOXELS bounds the filtered distance's error (the 3/256 with a margin): an end of a step
# filtered that close to the contact distance is sampled again exactly (sdf_sample) before the push-out.
SDF_EDGE_VOXELS = 1 / 256
SDF_FILTER_VOXELS = 1 / 64
# What shaders/include/sdf_sample.glsl needs #defined.
SDF_SAMPLING = (("SDF_EDGE_VOXELS", repr(SDF_EDGE_VOXELS)), ("SDF_FILTER_VOXELS", repr(SDF_FILTER_VOXELS)))
COLLIDER_ROWS = COLLIDER.texels  # uniform rows per collider (collider_rows)
TRIANGLE_ROW = SIZES["TRIANGLE_ROW"]  # texels per row of the triangle image (1024 triangles)


@dataclass(frozen=True)
class ForceField:
    """A Blender force field in world space, as an acceleration (unit mass).

    wind: ``strength`` along ``axis``; vortex: ``strength`` around ``axis``
    through ``position``; force: ``strength`` away from ``position``;
    turbulence: ``strength`` times the effect's curl noise at world scale
    ``size``.  All fall off as distance ** -falloff_power (distances below one
    count as one), and vanish beyond ``max_distance`` when it is positive.
    """

    type: str
    strength: float
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    axis: tuple[float, float, float] = (0.0, 0.0, 1.0)
    falloff_power: float = 0.0
    max_distance: float = 0.0
    size: float = 1.0


@dataclass(frozen=True)
class Collider:
    """A plane, sphere, box or signed distance field in its object's space, placed by ``matrix`` (4x4, local
    to world).

    plane: the local z = 0 rectangle |x| <= half_size.x, |y| <= half_size.y, solid below;
    sphere: ``center``, radius half_size.x; box: ``center`` +- ``half_size``; SDF: the grid ``sdf`` (an
    sdf.SdfGrid in shape space, at ``sdf_z_offset`` in the effect's SDF atlas), ``matrix`` rigid, ``center``
    zero.  ``previous`` is the matrix one frame earlier (None: not moving): the kernel
    moves the collider between the two across substeps and bounces particles
    off it relative to its surface velocity, so a moving collider pushes them.

    Blender's collision settings, for every kind: ``bounce`` (1 - Damping), ``friction``, ``thickness``
    (Thickness Outer: particles within it touch, and are put back at surface + thickness; an SDF's is at
    least SDF_CONTACT_VOXELS voxels, as its sampled field of a sheet thinner than a voxel may stay half a voxel
    positive), ``stickiness`` (a speed toward the surface added at each contact, cancelled at the next
    before it bounces: particles hang on under it while it beats what pulls them off in a step), ``kill``
    (particles die at the contact) and ``permeability`` (the chance that a particle passes through; one that
    started the step inside a permeable collider moves freely).
    """

    type: str
    matrix: np.ndarray
    center: tuple[float, float, float] = (0.0, 0.0, 0.0)
    half_size: tuple[float, float, float] = (1.0, 1.0, 1.0)
    bounce: float = 0.5
    friction: float = 0.0
    previous: np.ndarray | None = None
    name: str = ""
    thickness: float = 0.0
    stickiness: float = 0.0
    permeability: float = 0.0
    kill: bool = False
    sdf: SdfGrid | None = None
    sdf_z_offset: int = 0


def pack_force_fields(fields: list[ForceField]) -> np.ndarray:
    """(max(1, n), FIELD_TEXELS, 4): a records.FORCE_FIELD a row."""
    return FORCE_FIELD.pack_rows([
        {"kind": FIELD_TYPES[f.type], "strength": f.strength, "falloff_power": f.falloff_power,
         "max_distance": f.max_distance, "position": f.position, "size": f.size, "axis": _unit(f.axis)}
        for f in fields])


def _unit(axis) -> np.ndarray:
    axis = np.asarray(axis, np.float64)
    return axis / max(np.linalg.norm(axis), 1e-12)


def collider_rows(colliders: list[Collider], start: float, end: float, dt: float) -> np.ndarray:
    """(MAX_COLLIDERS * COLLIDER_ROWS, 4) uniform rows of one simulate dispatch, a records.COLLIDER each:

    the world to centered local matrix (local minus ``center``) at the step's
    end, the z row of that at its start, centered local to world at its end,
    the surface velocity per centered local point, (to_world(end) - to_world(start)) / dt.

    ``start`` and ``end`` are fractions of the frame: each matrix is interpolated
    between the previous frame's and this frame's linearly in its entries (exact
    for moving colliders, approximate for turning or scaling ones).  Built once
    per dispatch on the host, so the kernel does no per-particle matrix work.  Without colliders: one
    read-only array of zeros, shared (a viewport draw packs these rows every step).
    """
    if not colliders:
        return _NO_COLLIDER_ROWS
    rows = np.zeros((MAX_COLLIDERS, COLLIDER_ROWS, 4), np.float64)
    for row, c in zip(rows, colliders):  # rows in float64 until every one is worked out
        now = np.asarray(c.matrix, np.float64)
        before = now if c.previous is None else np.asarray(c.previous, np.float64)
        inverse_now, inverse_before = np.linalg.inv(now), np.linalg.inv(before)
        shift = np.identity(4)
        shift[:3, 3] = c.center
        to_world = [(before + (now - before) * s) @ shift for s in (start, end)]
        to_local = [inverse_before + (inverse_now - inverse_before) * s for s in (start, end)]
        for m in to_local:
            m[:3, 3] -= c.center
        row[...] = COLLIDER.pack({
            "kind": COLLIDER_TYPES[c.type], "bounce": c.bounce, "friction": c.friction, "half_size": c.half_size,
            "to_local": to_local[1][:3], "start_z": to_local[0][2], "to_world": to_world[1][:3],
            "surface_velocity": (to_world[1][:3] - to_world[0][:3]) / dt, "stickiness": c.stickiness,
            "permeability": c.permeability, "kill": float(c.kill), **_sdf_lanes(c)}, np.float64)
    return rows.reshape(-1, 4).astype(np.float32)


SDF_REACH_ROWS = 2  # uniform rows per collider of sdf_reach: its box's low and high corners
_REACHES_NOTHING = ((1e30,) * 4, (-1e30,) * 4)  # an analytic collider's (and unused slots') box
_REACHES_EVERYTHING = ((-1e30,) * 4, (1e30,) * 4)  # a turning or scaling SDF collider's


def sdf_reach(colliders: list[Collider], start: float, end: float, dt: float) -> dict:
    """The SDF broad phase's uniforms (simulate.glsl meets_sdf_reach): ``sdf_reach``, (MAX_COLLIDERS *
    SDF_REACH_ROWS, 4) rows, per SDF collider a world box; ``sdf_reach_spread``, a 4x4 matrix whose 3x3 part
    spreads a step's half extent, such that a step whose box (its midpoint +- spread x |half the step|)
    misses a collider's box cannot meet that collider's grid (the exact test, meets_sdf_grid, would fail):
    a few compares with uniforms instead of the exact test's matrix work, for the many particles far from it.

    Why that holds: with to_world W and to_local L = W^-1 the exact test's local segment box maps to a
    parallelepiped whose world box is its midpoint +- |W| |L| |half the step| (spread: the largest |W| |L|
    of the colliders, the identity for axis-aligned ones), and the step's start moves with the collider's
    motion over at most ``dt`` (step_start_local), which the collider's box takes in.  Only translating or
    still colliders bound that motion: a turning or scaling one's box is everything (the exact test decides).
    Without SDF colliders: the same read-only arrays every step (a viewport draw packs these every step)."""
    if not any(c.type == "SDF" for c in colliders):
        return dict(_NO_SDF_REACH)
    return _sdf_reach(colliders, start, end, dt)


def _sdf_reach(colliders: list[Collider], start: float, end: float, dt: float) -> dict:
    rows = np.array([_REACHES_NOTHING] * MAX_COLLIDERS, np.float64)
    spread = np.identity(4)
    for row, c in zip(rows, colliders):
        if c.type != "SDF":
            continue
        now = np.asarray(c.matrix, np.float64)
        before = now if c.previous is None else np.asarray(c.previous, np.float64)
        if not np.array_equal(before[:3, :3], now[:3, :3]):
            row[...] = _REACHES_EVERYTHING
            continue
        to_world = [before + (now - before) * s for s in (start, end)]
        linear = to_world[1][:3, :3]
        spreads = np.abs(linear) @ np.abs(np.linalg.inv(linear))
        spread[:3, :3] = np.maximum(spread[:3, :3], spreads)
        lanes = _sdf_lanes(c)
        low, high = np.asarray(lanes["sdf_low"]), np.asarray(lanes["sdf_high"])
        motion = np.abs(to_world[1][:3, 3] - to_world[0][:3, 3])  # over at most dt
        half = np.abs(linear) @ ((high - low) / 2 + lanes["thickness"]) + (spreads + np.identity(3)) @ motion / 2
        centre = linear @ ((low + high) / 2) + to_world[1][:3, 3]
        pad = 1e-4 * (1.0 + np.abs(centre).max() + half.max())  # float32 rounding, on the safe side
        row[0, :3], row[1, :3] = centre - half - pad, centre + half + pad
    spread[:3, :3] *= 1 + 1e-4
    return {"sdf_reach": rows.reshape(-1, 4).astype(np.float32), "sdf_reach_spread": spread}


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


_NO_COLLIDER_ROWS = _read_only(np.zeros((MAX_COLLIDERS * COLLIDER_ROWS, 4), np.float32))
_NO_SDF_REACH = {name: _read_only(array) for name, array in _sdf_reach([], 0.0, 1.0, 1.0).items()}


def _sdf_lanes(c: Collider) -> dict:
    """The thickness and grid lanes of a collider record (zero grid lanes for the analytic kinds)."""
    if c.type != "SDF":
        return {"thickness": c.thickness, "sdf_low": 0.0, "sdf_inverse_voxel": 0.0, "sdf_high": 0.0,
                "sdf_z_offset": 0.0, "sdf_size": 0.0, "sdf_step": 0.0, "sdf_slack": 0.0, "sdf_surface": 0.0}
    grid = c.sdf
    if grid is None or min(grid.dims) < 2 or not grid.voxel > 0 or any(c.center):
        raise ValueError(f"SDF collider {c.name!r}: needs a grid of at least 2 voxels a side and a centre at zero")
    low = np.asarray(grid.origin, np.float64)
    return {"thickness": max(c.thickness, SDF_CONTACT_VOXELS * grid.voxel), "sdf_low": low,
            "sdf_inverse_voxel": 1.0 / grid.voxel, "sdf_high": low + np.asarray(grid.dims) * grid.voxel,
            "sdf_z_offset": c.sdf_z_offset, "sdf_size": grid.dims, "sdf_step": SDF_STEP_VOXELS * grid.voxel,
            "sdf_slack": SDF_SLACK_VOXELS * grid.voxel, "sdf_surface": float(grid.surface)}


@dataclass(frozen=True)
class EmitterMesh:
    """Triangles of an evaluated mesh in object space, for area-weighted surface emission."""

    vertices: np.ndarray  # (n, 3)
    triangles: np.ndarray  # (t, 3) vertex indices

    @property
    def count(self) -> int:
        return len(self.triangles)


def pack_triangles(mesh: EmitterMesh | None) -> tuple[np.ndarray, int]:
    """The triangle image (rows, TRIANGLE_ROW, 4) and the triangle count.

    Triangle t owns texels TRIANGLE_TEXELS * t on in row-major order, a
    records.TRIANGLE (corners, cumulative area fraction, unit normal).  The
    kernel finds a triangle by binary search on the cumulative fraction, so
    triangles are picked in proportion to their area.
    """
    if mesh is None or mesh.count == 0:
        return np.zeros((1, TRIANGLE_ROW, 4), np.float32), 0
    v = np.asarray(mesh.vertices, np.float64)[np.asarray(mesh.triangles)]
    cross = np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0])
    area = np.linalg.norm(cross, axis=1)
    total = area.sum()
    if not total > 0:
        raise ValueError("the emitter mesh has no area: all of its faces are degenerate")
    cumulative = np.cumsum(area) / total
    cumulative[-1] = 1.0
    normal = cross / np.maximum(area, 1e-30)[:, None]
    texels = TRIANGLE.pack({"v0": v[:, 0], "cumulative_area": cumulative, "v1": v[:, 1], "v2": v[:, 2],
                            "normal": normal})
    flat = texels.reshape(-1, 4)
    rows = -(-len(flat) // TRIANGLE_ROW)
    image = np.zeros((rows * TRIANGLE_ROW, 4), np.float32)
    image[: len(flat)] = flat
    return image.reshape(rows, TRIANGLE_ROW, 4), mesh.count
