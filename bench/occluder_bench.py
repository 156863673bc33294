"""Suite ``viewport-occluder``: what occluder meshes cost a viewport draw, kept or read every draw.

    .venv/bin/python bench/occluder_bench.py                 # any machine: the cost is the CPU's
    source /tmp/bgpu/env && .venv/bin/python bench/occluder_bench.py --count 4000000 --size 1920x1080

The default preset's scene with a UV sphere of about ``--vertices`` vertices between the camera and
the emitter, or ``--objects`` one-triangle objects off to the side (scene occlusion on, each case
alone), drawn through ``viewport.draw_view`` into an offscreen view as
``bench/blender_gpu.py`` draws it: ``ms`` / ``cpu_ms``, the median draw while playing (drained before
and after / until ``draw_view`` returns), with the overlay's kept occluder triangles
(``depth_prepass.KeptMeshes``: read again only after an edit, or on another frame for meshes that
change over time); the peer (``peer_ms``, ``peer_cpu_ms``) reads every occluder's evaluated mesh
each draw, as a bake does each frame (and as the viewport did before); ``unindexed_ms``,
``unindexed_cpu_ms``: the kept triangles, but every object of the scene asked each draw whether it
emits, pushes, collides or occludes (``scene_index.SceneIndex`` bypassed, as draws did before it).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bpy  # noqa: E402
import gpu  # noqa: E402

from addon import viewport  # noqa: E402
from addon.hosts.blender import BlenderHost  # noqa: E402
from addon.scene.depth_prepass import DepthPrepass  # noqa: E402
from addon.scene.index import SceneIndex  # noqa: E402
from bench import records  # noqa: E402
from bench.profile_blender import viewport_scene  # noqa: E402


def playing(view, frames) -> tuple[float, float]:
    """Median (ms, cpu_ms) of drawing ``frames`` in turn."""
    times = [view.timed_draw(frame) for frame in frames]
    return statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)


def add_occluders(scene, vertices: int, objects: int) -> tuple[str, int, int]:
    """A UV sphere of about ``vertices`` vertices in front of the emitter, or ``objects`` one-triangle
    objects (one mesh) beside the view; the case's name, vertices and triangles of them all."""
    if vertices:
        rings = max(3, round((vertices / 2) ** 0.5))
        bpy.ops.mesh.primitive_uv_sphere_add(segments=2 * rings, ring_count=rings, radius=1.5, location=(0, -4, 1))
        sphere = bpy.context.active_object.data
        return f"{len(sphere.vertices) // 1000}K-vertex-occluder", len(sphere.vertices), len(sphere.loop_triangles)
    triangle = bpy.data.meshes.new("triangle")
    triangle.from_pydata([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [], [(0, 1, 2)])
    for i in range(objects):
        obj = bpy.data.objects.new(f"occluder {i}", triangle)
        obj.location = (100 + i, 100, 0)
        scene.collection.objects.link(obj)
    bpy.context.view_layer.update()
    return f"{objects}-object-occluders", 3 * objects, objects


def measure(count: int, width: int, height: int, vertices: int, objects: int, draws: int) -> dict:
    with viewport_scene(count, width, height, "ADD", 3 * draws + 10) as view:
        name, total_vertices, triangles = add_occluders(view.scene, vertices, objects)
        for frame in range(4, 8):
            view.timed_draw(frame)
        ms, cpu_ms = playing(view, range(8, 8 + draws))
        with mock.patch.object(SceneIndex, "indexed", asked_every_call):
            unindexed_ms, unindexed_cpu_ms = playing(view, range(8 + draws, 8 + 2 * draws))
        with mock.patch.object(viewport.ViewportRenderer, "_depth_prepass", lambda self: DepthPrepass()):
            viewport.overlay().mark_stale()  # a new simulation, with the pre-pass of a bake
            view.timed_draw(8 + 2 * draws)
            peer_ms, peer_cpu_ms = playing(view, range(9 + 2 * draws, 9 + 3 * draws))
    return {"case": f"{height}p-{count // 1000}K-add-{name}", "n": count, "width": width, "height": height,
            "vertices": total_vertices, "triangles": triangles, "objects": max(objects, 1),
            "ms": ms, "cpu_ms": cpu_ms, "peer": "occluders read every draw", "peer_ms": peer_ms,
            "peer_cpu_ms": peer_cpu_ms, "speedup": peer_ms / ms,
            "unindexed_ms": unindexed_ms, "unindexed_cpu_ms": unindexed_cpu_ms, "draws_timed": draws}


def asked_every_call(index, scene, test):
    """SceneIndex.indexed without its kept answers: every object asked each time, as draws did before."""
    return [(place, obj) for place, obj in enumerate(scene.objects) if test(obj)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--size", default="640x360")
    parser.add_argument("--vertices", default="50000,500000", help="sphere sizes, comma-separated")
    parser.add_argument("--objects", default="2000", help="counts of one-triangle occluders, comma-separated")
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--out", type=Path, help="results folder (default bench/results/)")
    args = parser.parse_args(argv)
    BlenderHost()  # gpu.init() in the bpy module
    width, height = (int(v) for v in args.size.split("x"))
    cases = [(int(v), 0) for v in args.vertices.split(",") if v] + [(0, int(n)) for n in args.objects.split(",") if n]
    rows = [measure(args.count, width, height, vertices, objects, args.draws) for vertices, objects in cases]
    records.write("viewport-occluder", gpu.platform.renderer_get(), rows, results=args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
