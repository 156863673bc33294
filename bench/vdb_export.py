"""VDB frames of the smoke preset written, against Blender's own way in the same run (suite ``export``, case
``vdb-smoke``; issue 47).

Ours: per frame, the effect's grids at a 256-voxel longest side (the voxel edge from the live particles' bounds)
made on the GPU, their leaves' buffers too, as the file stores them (light/volume_grids.py), and read back, then
on writer threads (as many as a bake has) encoded (header and topology by numpy) and written (output/volumes.py,
output/vdb_file.py).  ``fps``: frames over the wall clock from the first frame's grids to the last file on disk,
the simulation step excluded (``simulate_ms``: its cost per frame, apart); ``frames_ms`` each frame's part of it
(bounds to readback, ``frame_ms`` their median), ``tail_ms`` the wait for the last files.  Where the time goes, ms a frame:
``grid_ms`` (GPU passes, until the leaf tallies are read back: the GPU's work included; ``bounds_ms`` of it the
bounds pass and its 6 texels read back), ``readback_ms`` (the leaves' records and buffers, ``readback_mb`` of
them), ``encode_ms`` (the file's parts: metadata, topology, the header's UUID; on a writer), ``disk_ms``
(writing them, on a writer); ``passes_ms``: the last frame's grids made again with the GPU waited for after
every pass (bench/counting.timed_passes), ms by kernel, clears and reads; ``leaves`` and ``active_voxels`` (of
the density grid) of the last frame; ``reallocations``: the times the timed frames outgrew the grid images (each
makes new ones: 112 ms on the H200; light/volume_grids.held_shape), ``images_mb`` the GPU memory they hold.

Blender's way (``peer_ms_per_frame``): the same live points (positions and radii at that frame) set on a
PointCloud whose Geometry Nodes run Points to Volume at the same voxel size into a Bake node, baked to disk
(.vdb in the bake's blobs) by ``geometry_node_bake_single`` a frame at a time; timed: setting the points and the
bake.  Its density grid is its own (a uniform density inside each sphere), not ours; the voxels are the same.

    .venv/bin/python bench/blender_gpu.py --suites export [--quick]   (with bench/export.py's points-1M)
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import bpy
import numpy as np

from addon.engine.light.volume_grids import LEAF, RECORD_WORDS, VolumeGrids, place
from addon.engine.look.look import look_table
from addon.engine.reference.light.shadow_volume import particles
from addon.output import vdb_file, volumes
from addon.scene.renderer import SceneRenderer
from bench.bake_throughput import effect_scene
from bench.counting import timed_passes

PRESET = "smoke"
LONGEST_SIDE = 256
START = 60  # frames simulated first: the plume grown


def _voxel(bounds) -> float:
    """The voxel edge that gives the grid (margin and leaves included) about LONGEST_SIDE voxels a side."""
    lower, upper = bounds
    return float(np.max(upper - lower)) / (LONGEST_SIDE - 2 * LEAF)


def ours(renderer, frames: range, folder: Path, workers: int, points: list) -> dict:
    """Our frames, timed; ``points`` gets each frame's live points (world centers, radii: the peer's input),
    read apart from the timing."""
    system = renderer.simulation.systems[0]
    look = renderer.resources.look_texture(system)
    table = look_table(system.settings, system.ramp)
    grids = VolumeGrids(renderer.host)
    stages = {name: [] for name in ("simulate_ms", "grid_ms", "bounds_ms", "readback_ms", "encode_ms", "disk_ms",
                                    "frame_ms")}

    def write(path, effect):
        started = time.perf_counter()
        parts = volumes.encode([effect])
        encoded = time.perf_counter()
        vdb_file.write(path, parts)
        effect.leaves.give_back()  # once written, as volumes.write does (the parts hold its buffers)
        stages["encode_ms"].append((encoded - started) * 1e3)
        stages["disk_ms"].append((time.perf_counter() - encoded) * 1e3)

    # A frame's grids made and read once before the clock starts: Blender compiles a kernel at its first
    # dispatch (the peer's first bake is a warm-up too).
    bounds = grids.bounds(system, look)
    grids.build(system, look, place(*bounds, _voxel(bounds), renderer.host.max_texture_3d_size))
    grids.read().give_back()
    last, made = None, grids.allocations
    with ThreadPoolExecutor(workers) as pool:
        futures, wall = [], 0.0
        for frame in frames:
            started = time.perf_counter()
            renderer.advance_to(frame)
            renderer.host.sleep_until_idle()  # the simulation's GPU work done before the clock starts (asleep, as
            renderer.host.read(grids.bounds_image)  # the product waits; the read: on hosts that cannot sleep)
            stages["simulate_ms"].append((time.perf_counter() - started) * 1e3)
            centers, radii, _ = particles(*system.read_state(), system.settings, table)
            points.append((centers + system.origin, radii))
            begun = time.perf_counter()
            bounds = grids.bounds(system, look)
            stages["bounds_ms"].append((time.perf_counter() - begun) * 1e3)
            placement = place(*bounds, _voxel(bounds), renderer.host.max_texture_3d_size)
            grids.build(system, look, placement)
            renderer.host.sleep_until_idle()  # as grids.read waits
            renderer.host.read(grids.bounds_image)
            built = time.perf_counter()
            leaves = grids.read()
            read = time.perf_counter()
            stages["grid_ms"].append((built - begun) * 1e3)
            stages["readback_ms"].append((read - built) * 1e3)
            last = placement
            futures.append(pool.submit(write, folder / f"f_{frame:04d}.vdb",
                                       volumes.EffectVolume(PRESET, leaves, placement, placement.voxel)))
            wall += read - begun
            stages["frame_ms"].append((read - begun) * 1e3)
        drained = time.perf_counter()
        for future in futures:
            future.result()
        tail = time.perf_counter() - drained
        wall += tail
    placement = last
    with timed_passes(renderer.host) as passes:  # the last frame again, every pass waited for: where grid_ms goes
        grids.build(system, look, placement)
        leaves = grids.read()
    return {"fps": len(frames) / wall, "ms_per_frame": wall * 1e3 / len(frames),
            "passes_ms": {name: round(ms, 2) for name, ms in passes.items()},
            **{name: statistics.median(values) for name, values in stages.items()},
            "frames_ms": [round(ms, 2) for ms in stages["frame_ms"]], "tail_ms": tail * 1e3,
            "reallocations": grids.allocations - made, "images_mb": grids.image_bytes / 2**20,
            "voxel": placement.voxel, "grid": "x".join(map(str, placement.shape)),
            "leaves": len(leaves.grids["density"].origins), "active_voxels": int(leaves.grids["density"].counts.sum()),
            "readback_mb": sum(g.buffers.nbytes + g.origins.shape[0] * RECORD_WORDS * 4
                               for g in leaves.grids.values()) / 2**20, "workers": workers}


def _bake_tree(voxel: float):
    """Points to Volume (radius per point, ``voxel`` edge) into a Bake node."""
    tree = bpy.data.node_groups.new("Points To VDB", "GeometryNodeTree")
    tree.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    tree.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    nodes, links = tree.nodes, tree.links
    group_in, group_out = nodes.new("NodeGroupInput"), nodes.new("NodeGroupOutput")
    to_volume, radius, bake = (nodes.new(kind) for kind in ("GeometryNodePointsToVolume", "GeometryNodeInputRadius",
                                                             "GeometryNodeBake"))
    to_volume.inputs["Resolution Mode"].default_value = "Size"
    to_volume.inputs["Voxel Size"].default_value = voxel
    bake.bake_items.new("GEOMETRY", "Geometry")
    links.new(group_in.outputs[0], to_volume.inputs["Points"])
    links.new(radius.outputs[0], to_volume.inputs["Radius"])
    links.new(to_volume.outputs[0], bake.inputs[0])
    links.new(bake.outputs[0], group_out.inputs[0])
    return tree


def peer(scene, points: list, voxel: float, folder: Path) -> dict:
    """Blender's way on each frame's ``points`` (after a warm-up bake of the first), ms a frame.  The points are
    read before: a frame change with this modifier in the scene crashed Blender 5.2 (the bpy module)."""
    cloud = bpy.data.pointclouds.new("Smoke Points")
    obj = bpy.data.objects.new("Smoke Points", cloud)
    scene.collection.objects.link(obj)
    modifier = obj.modifiers.new("Points To VDB", "NODES")
    modifier.node_group = _bake_tree(voxel)
    bake = modifier.bakes[0]
    bake.bake_mode, bake.bake_target, bake.use_custom_path, bake.directory = "STILL", "DISK", True, str(folder)
    times = []
    for index, (centers, radii) in enumerate((points[0], *points)):
        started = time.perf_counter()
        if len(cloud.points) != len(centers):
            cloud.resize(len(centers))
        cloud.attributes["position"].data.foreach_set("vector", np.ascontiguousarray(centers, np.float32).ravel())
        radius = cloud.attributes.get("radius") or cloud.attributes.new("radius", "FLOAT", "POINT")
        radius.data.foreach_set("value", np.ascontiguousarray(radii, np.float32))
        with bpy.context.temp_override(active_object=obj, object=obj, selected_objects=[obj]):
            result = bpy.ops.object.geometry_node_bake_single(session_uid=obj.session_uid,
                                                               modifier_name=modifier.name, bake_id=bake.bake_id)
        if result != {"FINISHED"} or not list(folder.rglob("*.vdb")):
            raise RuntimeError(f"Blender's bake wrote no .vdb: {result}")
        if index:  # the first: warm-up
            times.append((time.perf_counter() - started) * 1e3)
    return {"peer_ms_per_frame": statistics.median(times), "peer_points": len(points[-1][0]),
            "peer_frames": len(times)}


def vdb_smoke(quick: bool, frames: int, peer_frames: int, count: int | None = None, workers: int | None = None,
              switch_interval: float | None = None) -> dict:
    """The ``vdb-smoke`` case: ours over ``frames`` frames, Blender's way over ``peer_frames`` of them; ``workers``
    writer threads, by default as many as a bake has (frame_writer.FrameWriter: one a core); ``switch_interval``
    (s, sys.setswitchinterval) while ours runs, else Python's: a writer waits up to that long for the GIL after
    each numpy call that let it go while another thread runs Python (an A/B knob, not the product's)."""
    workers = workers or os.process_cpu_count() or 1
    from addon.engine.settings.presets import load_preset

    count = count or load_preset(PRESET).effect.count // (100 if quick else 1)
    with tempfile.TemporaryDirectory(prefix="vdb_smoke_") as temp:
        temp = Path(temp)
        start = START // 10 if quick else START
        scene = effect_scene(PRESET, count, 64, 36, (1, start + frames), temp / "frames")
        renderer = SceneRenderer(scene, 64, 36)
        renderer.advance_to(start - 1)
        (temp / "ours").mkdir()
        points = []
        switched = sys.getswitchinterval()
        sys.setswitchinterval(switch_interval or switched)
        try:
            result = ours(renderer, range(start, start + frames), temp / "ours", workers, points)
        finally:
            sys.setswitchinterval(switched)
        files = sorted((temp / "ours").glob("*.vdb"))
        result["mb_per_frame"] = sum(f.stat().st_size for f in files) / len(files) / 2**20
        result.update(peer(scene, points[:peer_frames], result["voxel"], temp / "peer"))
    return {"case": "vdb-smoke", **result, "ratio": result["peer_ms_per_frame"] / result["ms_per_frame"],
            "switch_interval_ms": (switch_interval or sys.getswitchinterval()) * 1e3,
            "n": count, "frames": frames, "preset": PRESET, "longest_side": LONGEST_SIDE,
            "peer": "Geometry Nodes Points to Volume into a Bake node (STILL, to disk), a frame at a time"}
