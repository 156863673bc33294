"""Lab: what the neighbour walk costs and which shape of it is fastest (issue 46), inside Blender on the GPU.

Each shape (bench/shaders/walk_lab.glsl) counts every particle's neighbours within the radius of fluid-1M's
settled block (bench/interactions.py's lattice, the same grid) and sums (r^2 - d^2)^3 over them, fluid_lambda's
density without its reads; timed like bench/interactions.py (repetitions between drains):

* ``generator``: the product's walk until 2026-12-02 (next_neighbour, then in shaders/include/neighbours.glsl,
  copied into the lab file), which the gathers called;
* ``loops``: the same order as nested loops (rows, kept bins, entries), the body inline;
* ``list_build``: the product's walk storing each neighbour's entry (a column a neighbour, so consecutive threads
  write side by side), the cost of a list kept for a step's passes;
* ``list_read``: the same gather from the stored list (the product since: shaders/grid_neighbours.glsl lists with
  the nested loops, the gathers read include/neighbours.glsl's lists);
* ``tiled``: a workgroup's nine row spans copied into shared memory first, the walk reading there;
* ``loops_64``, ``tiled_64``: 64 threads a workgroup;
* ``dispatch``: one workgroup that does nothing, ms a dispatch from Python (what bounds small effects' steps).

Every shape's counts equal the generator's and its sums equal them bit for bit (the same order), checked here.

    .venv/bin/python bench/walk_variants.py [--count 1000000] [--repeats 30] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bpy  # noqa: E402, F401  (the bpy module provides gpu)
import numpy as np  # noqa: E402

from addon.engine.primitives.scan import linear_size  # noqa: E402
from addon.engine.seam.kernels import Image, Kernel, Shared, include_source  # noqa: E402
from addon.engine.simulate.neighbours import CELL_CONSTANTS, ENTRY_IMAGES, MAX_NEIGHBOURS  # noqa: E402
from addon.hosts.blender import BlenderHost  # noqa: E402
from bench import records  # noqa: E402
from bench.interactions import GRAIN, STEP_LAYERS, system_with, timed_ms  # noqa: E402

LAB = Path(__file__).resolve().parent / "shaders" / "walk_lab.glsl"
DEFINES = (("MAX_NEIGHBOURS", str(MAX_NEIGHBOURS)),)
TILE = 1792  # entries of a workgroup's shared tile (28 KiB: llvmpipe has 32; --tile on the H200's 48)


@dataclass(frozen=True)
class LabKernel(Kernel):
    """A shape of walk_lab.glsl (its WALK_SHAPE define)."""

    def body(self) -> str:
        return self.records + include_source(self.includes) + LAB.read_text()

    def source_lines(self):
        return [("bench/shaders/walk_lab.glsl", n + 1) for n in range(self.body().count("\n"))]


BASE = LabKernel(
    "walk_lab",
    images=(*ENTRY_IMAGES, Image("grid_overflow", "R32UI", atomic=True), Image("lab_out", "RGBA32F", "WRITE"), Image("lab_list", "R32UI", "READ_WRITE"),
            Image("lab_count", "R32UI", "READ_WRITE")),
    constants=CELL_CONSTANTS,
    shared=(Shared("vec4", "tile", TILE), Shared("uint", "span_start", 9), Shared("uint", "span_end", 9),
            Shared("uint", "span_at", 9)),
    includes=("common.glsl", "grid_cell.glsl", "grid_entry.glsl"),
    defines=(*DEFINES, ("TILE", str(TILE))),
)
SHAPES = {"generator": (0, 256), "loops": (1, 256), "list_build": (2, 256), "list_read": (3, 256),
          "tiled": (4, 256), "loops_64": (1, 64), "tiled_64": (4, 64), "dispatch": (9, 256)}


def shape_kernel(name: str, tile: int) -> LabKernel:
    shape, threads = SHAPES[name]
    shared = (Shared("vec4", "tile", tile), *BASE.shared[1:])
    return replace(BASE, defines=(*DEFINES, ("TILE", str(tile)), ("WALK_SHAPE", str(shape))),
                   local_size=(threads, 1, 1), shared=shared)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--tile", type=int, default=TILE, help="entries of the shared tile (16 bytes each)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    host = BlenderHost()
    values = {"interaction": "FLUID", "interaction_radius": 4 * GRAIN, "size": GRAIN, "iterations": 4}
    system = system_with(host, args.count, values, 2.02 * GRAIN, STEP_LAYERS)
    grid = system.interactions.grid
    grid.build(system.pos_age, system.vel_life, values["interaction_radius"])
    width, rows = system.pos_age.width, system.pos_age.height
    out = host.texture("lab_out", width, rows, "RGBA32F")
    listing = host.texture("lab_list", *linear_size(args.count * MAX_NEIGHBOURS, host.max_texture_size), "R32UI")
    counts = host.texture("lab_count", width, rows, "R32UI")
    textures = {"grid_sorted": grid.sorted, "grid_offsets": grid.binning.offsets, "grid_overflow": grid.overflow,
                "lab_out": out, "lab_list": listing, "lab_count": counts}
    rows_out, reference = [], None
    for name in [s for s in SHAPES if s != "dispatch"]:
        kernel = shape_kernel(name, args.tile)
        groups = kernel.groups_for(width, rows)
        ms = timed_ms(host, out, lambda kernel=kernel, groups=groups: host.dispatch(kernel, groups, textures, grid.constants), args.repeats)
        result = host.read(out).reshape(-1, 4)[: args.count, :2]
        reference = result if reference is None else reference
        rows_out.append({"case": name, "n": args.count, "ms": ms, "threads": SHAPES[name][1], "tile": args.tile,
                         "neighbours_mean": float(result[:, 0].mean()),
                         "counts_equal": bool(np.array_equal(result[:, 0], reference[:, 0])),
                         "sums_equal": bool(np.array_equal(result[:, 1], reference[:, 1]))})
        print(rows_out[-1], flush=True)
    empty = shape_kernel("dispatch", args.tile)
    per = 100
    ms = timed_ms(host, out, lambda: [host.dispatch(empty, (1, 1, 1), textures, grid.constants) for _ in range(per)],
                  args.repeats) / per
    rows_out.append({"case": "dispatch", "n": 1, "ms": ms, "threads": SHAPES["dispatch"][1], "tile": args.tile})
    records.write("walk-variants", host.device, rows_out, results=args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
