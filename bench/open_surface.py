"""Open mesh colliders (issue 4 and 7 of the SDF collider issue): rain on a displaced grid and a mesh collider's
first frame.

``rain``: a few thousand particles rain straight down onto a 40x40 grid whose z is displaced (terrain), with
Collision physics as an SDF collider; after ``--frames`` frames, the share of live particles over the grid that
are below its surface (the grid's height under each, from its triangles).  A closed mesh (a torus) as before.

``first-frame``: a mesh collider of ``--triangles`` triangles (a subdivided, displaced grid, or with ``--closed``
Suzanne subdivided) and where its first frame's time goes: reading the mesh, hashing, the ColliderMesh (open
edges), the grid and triangle prep, the GPU build (waited for).

    .venv/bin/python bench/open_surface.py rain --substeps 1 --resolution 0
    .venv/bin/python bench/open_surface.py first-frame --triangles 31000
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def terrain_height(x, y):
    """The displaced grid's z at (x, y): hills of a terrain in its first hour."""
    return 0.25 * np.sin(2.1 * x + 0.3) * np.cos(1.7 * y) + 0.1 * np.sin(5.3 * x * y)


def displaced_grid(name: str, cuts: int, size: float = 4.0):
    """A ``cuts`` x ``cuts`` grid ``size`` wide at the origin, z displaced by terrain_height, Collision on."""
    import bpy

    bpy.ops.mesh.primitive_grid_add(x_subdivisions=cuts, y_subdivisions=cuts, size=size)
    grid = bpy.context.object
    grid.name = name
    mesh = grid.data
    co = np.empty(len(mesh.vertices) * 3, np.float32)
    mesh.vertices.foreach_get("co", co)
    co = co.reshape(-1, 3)
    co[:, 2] = terrain_height(co[:, 0], co[:, 1])
    mesh.vertices.foreach_set("co", co.ravel())
    mesh.update()
    grid.modifiers.new("Collision", "COLLISION")
    return grid


def surface_height(obj, xy: np.ndarray) -> np.ndarray:
    """The z of the object's (world-space, heightfield) triangles under each point (nan off the mesh)."""
    mesh = obj.data
    mesh.calc_loop_triangles()
    co = np.empty(len(mesh.vertices) * 3, np.float64)
    mesh.vertices.foreach_get("co", co)
    co = co.reshape(-1, 3) @ np.array(obj.matrix_world)[:3, :3].T + np.array(obj.matrix_world)[:3, 3]
    tris = np.empty(len(mesh.loop_triangles) * 3, np.int64)
    mesh.loop_triangles.foreach_get("vertices", tris)
    corners = co[tris.reshape(-1, 3)]
    heights = np.full(len(xy), np.nan)
    for a, b, c in corners:  # a few thousand triangles: point-in-triangle by barycentrics
        (x0, y0), (x1, y1), (x2, y2) = a[:2], b[:2], c[:2]
        det = (y1 - y2) * (x0 - x2) + (x2 - x1) * (y0 - y2)
        if abs(det) < 1e-12:
            continue
        wa = ((y1 - y2) * (xy[:, 0] - x2) + (x2 - x1) * (xy[:, 1] - y2)) / det
        wb = ((y2 - y0) * (xy[:, 0] - x2) + (x0 - x2) * (xy[:, 1] - y2)) / det
        wc = 1 - wa - wb
        inside = (wa >= -1e-9) & (wb >= -1e-9) & (wc >= -1e-9)
        heights[inside] = (wa * a[2] + wb * b[2] + wc * c[2])[inside]
    return heights


def rain_scene(count: int, frames: int, substeps: int, resolution: int, thickness: float, closed: bool):
    """The default preset's scene with rain over the collider; returns (scene, collider)."""
    import bpy

    import addon
    from addon.cli import build_scene
    from addon.engine.settings.presets import load_preset

    build_scene(load_preset("default"), (1, frames), (64, 36), Path(tempfile.mkdtemp()) / "f")
    addon.register()
    scene = bpy.context.scene
    emitter = bpy.context.view_layer.objects.active or scene.objects["Emitter"]
    bpy.context.view_layer.objects.active = emitter
    emitter.animation_data_clear()
    emitter.location = (0.0, 0.0, 1.5)
    bpy.ops.gpu_particles.add(preset="default")
    effect = emitter.gpu_particles.active_effect
    for name, value in dict(count=count, emitter_shape="BOX", emitter_radius=1.6, emitter_scale=(1.0, 1.0, 0.05),
                            velocity=(0.0, 0.0, -3.0), velocity_random=0.5, cone_angle=0.0, lifetime=frames / 24 + 1,
                            preroll=0.0, drag=0.0, turbulence_strength=0.0, substeps=substeps).items():
        setattr(effect, name, value)
    if closed:
        bpy.ops.mesh.primitive_torus_add(major_radius=1.0, minor_radius=0.25)
        target = bpy.context.object
        target.modifiers.new("Collision", "COLLISION")
    else:
        target = displaced_grid("Terrain", 40)
    target.gpu_particles_collider.resolution = resolution
    target.collision.thickness_outer = thickness
    bpy.context.view_layer.objects.active = emitter
    return scene, target


def rain(args) -> None:
    import bpy
    import gpu

    gpu.init()
    from addon.scene.renderer import SceneRenderer

    scene, target = rain_scene(args.count, args.frames, args.substeps, args.resolution, args.thickness, args.closed)
    renderer = SceneRenderer(scene, 16, 16)
    renderer.advance_to(args.frames)
    pos_age, vel_life = renderer.simulation.systems[0].read_state()
    alive = (pos_age[:, 3] >= 0) & (vel_life[:, 3] > 0) & np.isfinite(pos_age).all(axis=1)
    points = pos_age[alive, :3].astype(np.float64)
    if args.closed:
        ring = np.hypot(points[:, 0], points[:, 1]) - 1.0
        below = 0.25 - np.hypot(ring, points[:, 2]) > 0
        over = np.ones(len(points), bool)
    else:
        height = surface_height(target, points[:, :2])
        over = np.isfinite(height)
        below = over & (points[:, 2] < np.where(over, height, 0.0))
    sdf = next(c for c in renderer.simulation.systems[0].colliders if c.type == "SDF").sdf
    if below.any() and not args.closed:
        depth = np.where(over, height, 0.0)[below] - points[below, 2]
        rim = 2.0 - np.abs(points[below, :2]).max(axis=1)
        print(f"below: depth {np.percentile(depth, [0, 50, 100]).round(4)} m, from the rim "
              f"{np.percentile(rim, [0, 50, 100]).round(4)} m (voxel {sdf.voxel:.4f} m)")
    print(f"{'torus' if args.closed else 'grid'} substeps {args.substeps} resolution {args.resolution or 'Auto'} "
          f"({max(sdf.dims)} voxels) thickness {args.thickness}: {below.sum()} of {over.sum()} live particles over "
          f"the collider below its surface ({100 * below.sum() / max(over.sum(), 1):.2f}%)")
    bpy.ops.wm.read_factory_settings(use_empty=True)


def first_frame(args) -> None:
    import bpy
    import gpu

    gpu.init()
    import addon
    from addon.cli import build_scene
    from addon.engine.settings.presets import load_preset
    from addon.scene.renderer import SceneRenderer

    build_scene(load_preset("default"), (1, 2), (64, 36), Path(tempfile.mkdtemp()) / "f")
    addon.register()
    scene = bpy.context.scene
    emitter = scene.objects["Emitter"]
    bpy.context.view_layer.objects.active = emitter
    bpy.ops.gpu_particles.add(preset="default")
    emitter.gpu_particles.active_effect.count = 2000
    if args.closed:
        bpy.ops.mesh.primitive_monkey_add()
        obj = bpy.context.object
        levels = 0
        while 968 * 4 ** (levels + 1) <= args.triangles * 1.5:
            levels += 1
        modifier = obj.modifiers.new("Subdivision", "SUBSURF")
        modifier.levels = levels
        mesh = bpy.data.meshes.new_from_object(obj.evaluated_get(bpy.context.evaluated_depsgraph_get()))
        obj.modifiers.remove(modifier)
        obj.data = mesh
        obj.modifiers.new("Collision", "COLLISION")
    else:
        obj = displaced_grid("Terrain", max(2, int(round((args.triangles / 2) ** 0.5))))
    obj.data.calc_loop_triangles()
    triangles = len(obj.data.loop_triangles)
    bpy.context.view_layer.objects.active = emitter
    renderer = SceneRenderer(scene, 16, 16)
    renderer.advance_to(1)  # shaders compiled and the SDF kernels warmed on another collider's first frame
    obj.data.vertices[0].co.x += 1e-4  # a new mesh: read, hashed and built again on the next frame
    obj.data.update()
    renderer.simulation.sdf.measure = True
    host, kernels = renderer.simulation.sdf.builder.host, {}
    dispatch = host.dispatch

    def timed(kernel, *rest, **named):  # each SDF kernel waited for: where the build's time goes
        host.finish()
        began = time.perf_counter()
        dispatch(kernel, *rest, **named)
        host.finish()
        kernels[kernel.name] = kernels.get(kernel.name, 0.0) + time.perf_counter() - began

    host.dispatch = timed
    profile = cProfile.Profile()
    start = time.perf_counter()
    profile.enable()
    renderer.advance_to(2)
    profile.disable()
    total = time.perf_counter() - start
    host.dispatch = dispatch
    print(f"{'closed' if args.closed else 'open'} collider, {triangles:,} triangles: first frame {total:.2f} s, "
          f"SDF build (GPU, waited for) {renderer.simulation.sdf.rebuild_ms / 1000:.2f} s")
    print("kernels (s): " + ", ".join(f"{name} {seconds:.2f}" for name, seconds in kernels.items()))
    pstats.Stats(profile).sort_stats("cumulative").print_stats(args.top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="case", required=True)
    rain_parser = sub.add_parser("rain")
    rain_parser.add_argument("--count", type=int, default=4000)
    rain_parser.add_argument("--frames", type=int, default=48)
    rain_parser.add_argument("--substeps", type=int, default=1)
    rain_parser.add_argument("--resolution", type=int, default=0, help="SDF resolution (0: Auto)")
    rain_parser.add_argument("--thickness", type=float, default=0.02, help="Thickness Outer (Blender's default)")
    rain_parser.add_argument("--closed", action="store_true", help="a torus instead of the grid")
    frame_parser = sub.add_parser("first-frame")
    frame_parser.add_argument("--triangles", type=int, default=31_000)
    frame_parser.add_argument("--closed", action="store_true", help="subdivided Suzanne instead of a grid")
    frame_parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    {"rain": rain, "first-frame": first_frame}[args.case](args)


if __name__ == "__main__":
    main()
