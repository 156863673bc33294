"""Suite ``sdf``: building a collider's signed distance field on the GPU (issue 30).

    python3 bench/sdf_bench.py [--triangles 100000] [--resolution 128] [--repeats 20] [--peer-samples 20000]

Case ``build-128-100k``: a deterministic (2, 3) torus knot tube of about ``triangles`` triangles, its SDF
on a ``resolution``-voxel grid.  ``ms``: the build's dispatches (engine/simulate/sdf.py ``SdfBuilder.record``: band,
crossings, winding, flooding, write) on the moderngl host, GL timer queries; ``prepare_ms``: the CPU side
before them (``mesh_triangles`` and the triangle upload), wall time.  With ``bpy`` importable also
``blender_ms``: Blender's whole ``build`` (prepare included), wall time bounded by a finish.  The peer,
with ``mathutils`` (bpy): ``BVHTree.FromPolygons`` plus ``find_nearest`` per voxel centre on the CPU,
timed on ``peer_samples`` random voxels and scaled to the grid (``peer_ms``; the tree's build counted
once, unscaled); ``max_error_voxels``: the GPU's unsigned distance against the peer's on those voxels.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from addon.engine.simulate import sdf  # noqa: E402
from bench import records  # noqa: E402


def torus_knot(triangles: int, p: int = 2, q: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """A closed tube around the (p, q) torus knot with about ``triangles`` triangles (2 per quad)."""
    sides = max(6, int(round((triangles / 40) ** 0.5)))
    rings = max(3 * sides, triangles // (2 * sides))
    t = np.linspace(0, 2 * np.pi, rings, endpoint=False)

    def curve(t):
        radius = 2 + np.cos(q * t)
        return np.stack([radius * np.cos(p * t), radius * np.sin(p * t), -np.sin(q * t)], -1)

    centre = curve(t)
    tangent = curve(t + 1e-4) - curve(t - 1e-4)
    tangent /= np.linalg.norm(tangent, axis=1, keepdims=True)
    normal = np.cross(tangent, [0.0, 0.0, 1.0])
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    binormal = np.cross(tangent, normal)
    angle = np.linspace(0, 2 * np.pi, sides, endpoint=False)
    ring = np.cos(angle)[None, :, None] * normal[:, None] + np.sin(angle)[None, :, None] * binormal[:, None]
    vertices = (centre[:, None] + 0.4 * ring).reshape(-1, 3).astype(np.float32)
    i, j = np.meshgrid(np.arange(rings), np.arange(sides), indexing="ij")
    a, b = i * sides + j, ((i + 1) % rings) * sides + j
    c, d = ((i + 1) % rings) * sides + (j + 1) % sides, i * sides + (j + 1) % sides
    faces = np.concatenate([np.stack([a, b, c], -1).reshape(-1, 3), np.stack([a, c, d], -1).reshape(-1, 3)])
    return vertices, faces


def gpu_build_ms(vertices, faces, grid, repeats) -> dict:
    """The build's dispatches on the moderngl host (GL timer queries) and its CPU preparation."""
    from addon.hosts.moderngl import ModernGLHost

    host = ModernGLHost()
    builder = sdf.SdfBuilder(host)
    atlas = host.volume("sdf_atlas", shape=grid.dims[::-1])
    start = time.perf_counter()
    corners = sdf.mesh_triangles(vertices, faces, grid)
    triangles = builder.upload(corners)
    host.finish()
    prepare_ms = (time.perf_counter() - start) * 1e3
    ms = records.gl_ms(host.ctx, lambda: builder.record(triangles, len(corners), grid, atlas, 0), repeats)
    return {"device": host.device, "ms": ms, "prepare_ms": prepare_ms, "split_triangles": len(corners),
            "values": host.read(atlas)}


def blender_build_ms(vertices, faces, grid, repeats) -> float | None:
    """Blender's whole build (prepare included), wall time around a finish; None without bpy."""
    try:
        from addon.hosts.blender import BlenderHost

        host = BlenderHost()
    except Exception:  # no bpy here (the GPU machines), or no GPU context
        return None
    builder = sdf.SdfBuilder(host)
    atlas = host.volume("sdf_atlas", shape=grid.dims[::-1])
    times = []
    for _ in range(repeats + 1):
        host.finish()
        start = time.perf_counter()
        builder.build(vertices, faces, grid, atlas, 0)
        host.finish()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times[1:])


def peer(vertices, faces, grid, samples, values) -> dict:
    """mathutils' BVHTree.find_nearest at sampled voxel centres, scaled to the grid; {} without mathutils."""
    try:
        from mathutils.bvhtree import BVHTree
    except ImportError:
        return {}
    start = time.perf_counter()
    tree = BVHTree.FromPolygons(vertices.tolist(), faces.tolist(), all_triangles=True)
    tree_ms = (time.perf_counter() - start) * 1e3
    rng = np.random.default_rng(1)
    flat = rng.choice(values.size, min(samples, values.size), replace=False)
    centres = grid.centres().reshape(-1, 3)[flat]
    start = time.perf_counter()
    distances = np.array([tree.find_nearest(centre)[3] for centre in centres.tolist()])
    query_ms = (time.perf_counter() - start) * 1e3
    error = np.abs(np.abs(values.ravel()[flat]) - distances).max() / grid.voxel
    return {"peer": "mathutils BVHTree.find_nearest per voxel (CPU)",
            "peer_ms": tree_ms + query_ms * values.size / len(flat), "peer_samples": len(flat),
            "max_error_voxels": float(error)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--triangles", type=int, default=100_000)
    parser.add_argument("--resolution", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--peer-samples", type=int, default=20_000)
    parser.add_argument("--out", type=Path, help="results folder (default bench/results/)")
    args = parser.parse_args()
    vertices, faces = torus_knot(args.triangles)
    grid = sdf.sdf_grid(vertices, args.resolution)
    measured = gpu_build_ms(vertices, faces, grid, args.repeats)
    values = measured.pop("values")
    row = {"case": f"build-{args.resolution}-{round(args.triangles / 1000)}k", "n": int(np.prod(grid.dims)),
           "voxels": "x".join(map(str, grid.dims)), "triangles": len(faces), **measured}
    device = row.pop("device")
    blender_ms = blender_build_ms(vertices, faces, grid, min(args.repeats, 5))
    if blender_ms is not None:
        row["blender_ms"] = blender_ms
    row.update(peer(vertices, faces, grid, args.peer_samples, values))
    records.write("sdf", device, [row], results=args.out)


if __name__ == "__main__":
    main()
