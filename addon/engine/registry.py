"""Every kernel the add-on compiles, by shader file: the one list the tests and ``kernels show`` read.

Each kernel is declared (resources, constants, defines) in the engine module
that records its dispatches, next to that recording; this module gathers the
declarations, every variant included (state layouts, splat paths, sort
shapes, and each combination of the features a kernel accepts: ``Kernel.variants``;
no GLSL text is read), so a kernel that exists is a kernel that is tested on both hosts.
A new ``shaders/<name>.glsl`` with a ``main()`` must appear here
(tests/engine/test_kernels.py fails otherwise).  Kernels only the tests and benchmarks
dispatch are named in ``LAB_KERNELS``: the extension zip leaves their files out.
"""

from __future__ import annotations

from .draw import (
    bokeh,
    compositing,
    depth,
    glints,
    particle_depth,
    quad_tiles,
    raster,
    readback,
    ribbons,
    sprites,
    trail_tiles,
)
from .light import light_pass, shadow_volume, surface_shadow, volume_grids
from .look import point_records
from .order import sorting, tile_lists
from .primitives import compaction, scan
from .seam.kernels import Kernel
from .simulate import csg, events, flocking, fluids, granular, neighbours, sdf, simulation, trails

DECLARED: tuple[Kernel, ...] = (
    *simulation.INIT_KERNELS.values(),
    *simulation.SIMULATE_KERNELS.values(),
    *(kernel for passes in simulation.SDF_PASS_KERNELS.values() for kernel in passes),
    *(contacts for _, contacts in simulation.SDF_OPEN_PASS_KERNELS.values()),  # the list pass is the same
    *simulation.COPY_STATE_KERNELS.values(),
    simulation.COPY_TINT,
    *events.EVENT_KERNELS,
    *compaction.COMPACTION_KERNELS,
    *neighbours.GRID_KERNELS,
    *granular.GRANULAR_KERNELS,
    *fluids.FLUID_KERNELS,
    *flocking.FLOCK_KERNELS,
    *scan.SCAN_KERNELS,
    depth.DEPTH_PREPASS,
    depth.COARSE_DEPTH,
    *sorting.SORT_KERNELS,
    *compositing.SPLAT_VARIANTS,
    *compositing.FOOTPRINT_VARIANTS,
    compositing.resolve_kernel(compositing.PAIRED),
    raster.POINTS,
    raster.QUADS,
    *bokeh.BOKEH_KERNELS,
    *quad_tiles.QUAD_KERNELS,
    *trail_tiles.TRAIL_TILE_KERNELS,
    *sprites.SPRITE_KERNELS,
    tile_lists.tile_instances(False),
    *glints.EXTRACT_VARIANTS.values(),
    glints.SPRITES,
    glints.ADD,
    *csg.CSG_KERNELS,
    *sdf.SDF_KERNELS,
    *particle_depth.PARTICLE_DEPTH_KERNELS.values(),
    *trails.TRAIL_KERNELS,
    *ribbons.RIBBON_KERNELS,
    particle_depth.PARTICLE_DEPTH_TILES,
    particle_depth.TRAIL_DEPTH,
    readback.FRAME_OUT,
    readback.FRAME_OUT_HALF,
    *readback.FRAME_DISPLAY_VARIANTS.values(),
    *shadow_volume.SHADOW_KERNELS,
    light_pass.LIGHT_PARTICLES,
    *volume_grids.VOLUME_KERNELS,
    *point_records.POINT_RECORD_KERNELS,
    surface_shadow.SURFACE_SHADOW,
)
# Every variant of each declared kernel: the combinations of the features it accepts (kernels.Feature), e.g. the
# look features (lighting.LOOK_FEATURES) of every kernel that colors particles.
KERNELS: tuple[Kernel, ...] = tuple(variant for kernel in DECLARED for variant in kernel.variants())

# Kept to measure the product's kernels against, dispatched only by the tests and benchmarks: the naive splat
# (the aggregated splat replaced it, compositing.py) and the bitonic full sort (the radix sort replaced it,
# sorting.py); and the shadow volume's probe (shadow_volume.SAMPLE: the tests sample it at points).  Declared and tested on both hosts like the rest; not shipped (tools/package.py).
LAB_KERNELS = ("splat", "sort_local", "sort_merge", "shadow_sample")


def product_kernels() -> tuple[Kernel, ...]:
    """Every kernel the add-on itself may dispatch: KERNELS less the lab's."""
    return tuple(kernel for kernel in KERNELS if kernel.name not in LAB_KERNELS)


def shader_files(kernels: tuple[Kernel, ...]) -> set[str]:
    """The files under ``shaders/`` that these kernels' bodies are made of: each kernel's file and includes."""
    return {file for kernel in kernels for file in (f"{kernel.name}.glsl", *(f"include/{i}" for i in kernel.includes))}


def by_file() -> dict[str, tuple[Kernel, ...]]:
    """Shader file name (without .glsl) -> its declared variants, in pipeline order."""
    files: dict[str, list[Kernel]] = {}
    for kernel in KERNELS:
        files.setdefault(kernel.name, []).append(kernel)
    return {name: tuple(variants) for name, variants in files.items()}


def declared(name: str) -> tuple[Kernel, ...]:
    """The kernels declared for ``shaders/<name>.glsl``, before their features (each has ``variants()``); a clear
    error for an unknown name."""
    return _known(name, tuple(kernel for kernel in DECLARED if kernel.name == name))


def variants(name: str) -> tuple[Kernel, ...]:
    """The declared variants of ``shaders/<name>.glsl``; a clear error for an unknown name."""
    return _known(name, by_file().get(name, ()))


def _known(name: str, kernels: tuple[Kernel, ...]) -> tuple[Kernel, ...]:
    if not kernels:
        raise KeyError(f"no kernel '{name}'; declared: {', '.join(sorted(by_file()))}")
    return kernels
