"""Self-shadowing particle volumes: the particles' density in a 3D grid, transmittance toward each light.

Technique (Bavoil, "Volumetric shadows", GDC 2013): every frame the lit
particles' extinction is splatted into a voxel grid placed around them, and a
compute pass integrates, from every voxel center toward each shadowed light,
the optical depth through that grid into channel k of one RGBA16F 3D texture
(``transmittance``, channel k = shadow slot k, ``MAX_SHADOW_SLOTS`` = 4).  The
light pass samples it at each particle with hardware trilinear filtering
(``shaders/include/shadow_volume.glsl``'s ``shadow_transmittance``), so every
drawing path (points, sprites, stretched quads, additive or alpha) reads the
same soft value at the particle's center.

Why this one: its cost is fixed by the grid (64^3 voxels x 4 lights x at most
~110 texture fetches: independent of the particle count past the splat, 8 or 16
atomic adds a particle) and it needs no sort or per-light draw of the particles.  Green's half-angle
slicing (NVIDIA 2008) needs the particles sorted along the half-angle vector
and drawn slice by slice, once per light: tens of draws per frame and light,
tied to one camera and only for alpha-sorted sprites.  Fourier opacity maps
(Jansen and Bavoil, I3D 2010) are one 2D map per light, cheaper per light, but
their few Fourier terms ring (light leaks and bands at dense edges) and a point
light needs a cube of them.  A 3D grid also serves point, spot and area lights
and a light inside the cloud alike (the march stops at the light).

Pipeline per frame (``ShadowVolume.build``), no CPU readback:

- ``shadow_bounds``: the lit particles' bounds (center +- radius), a min/max
  tree per workgroup and one atomic max per bound into a 6-texel R32UI image;
- ``shadow_place``: the grid there: the voxel edge is a power of two, the
  corner a whole number of voxels, so the lattice stays fixed in the world as
  the particles move (no crawl); it changes only when the voxel size doubles
  or halves.  Written to the 1-texel image ``shadow_grid`` the next kernels and
  the light pass read (corner xyz, voxel edge w; 0: no grid, T = 1);
- ``shadow_density``: each particle's cross-section (density x shadow density x
  pi r^2, r its radius at its age) over the voxel volume, trilinearly into the
  8 voxels around it, as fixed point (``DENSITY_SCALE`` units per optical depth
  across a voxel edge) with ``imageAtomicAdd`` into an R32UI 3D image: a stack
  of sublevels half an octave of spread apart, on levels of 1, 2, 4, ...
  voxels' edge (``level_sizes``, ``sublevel_level``).  A particle goes to the sublevel whose blur
  (below) spreads it as wide as the particle model, shared between two so it
  grows smoothly: 8 atomics a particle, 16 between sublevels.  One add is at
  most ``MAX_PARTICLE_DEPTH`` (opaque already), so 1e6 particles at that limit
  in one voxel fit in 32 bits (1e6 x 16 x 256 < 2^32); rounding is dithered by
  a fixed hash of the slot, so millions of particles each far below one unit
  still sum to the right density (and the same every run);
- ``shadow_blur``: each sublevel blurred by a Gaussian (separable: x, y, z),
  so that splat + blur + read back have the particle's spread (``SPREAD``
  voxels of its level) whatever the particle's place in its voxel;
- ``shadow_resolve``: the sublevels, each read trilinearly, as floats (a
  texture the march filters);
- ``shadow_march``: per voxel and slot, exp(-sum) over whole-voxel steps to the
  light or the grid's edge, times the scene occluders' shadow there (shadow
  maps from ``addon/scene/light_shadows.py``, 3x3 percentage-closer taps).

The particle density model this approximates (``reference/light/shadow_volume.py``
integrates it exactly): each particle an isotropic Gaussian of its cross-section
with standard deviation r / 2 (a uniform ball of radius r has r / sqrt(5)).
Where the error came from (measured in numpy on the issue's dense and sparse
clouds, 64 voxels, radius 2.4 voxels): not the march (marching from each
particle itself in fine steps through the same density: the same error) nor
the resolution (the Gaussians sampled exactly at the voxel centers: within
0.006), but the density's shape.  A trilinear splat into a voxel about as
wide as the particle, read back trilinearly, is a Gaussian's width on
average only: a particle at a voxel's center comes out peaked, one at its
corner flat, and a particle shared between levels an octave apart is a
mixture of a narrow and a wide blob (up to 0.055 with one level per octave,
0.026 with a wider read back; the dithered fixed point adds about 0.005).
Splatting into a finer sublevel (the particle's spread ``SPREAD`` = 1.2 voxels
of it) and blurring there by a Gaussian makes the shape nearly independent of
the place; sublevels half an octave apart make the mixture nearly Gaussian.
Against the model (tests/engine/light/test_shadow_volume.py, 64 voxels): within 0.02 at
each particle of a dense and a sparse cloud and behind a slab (numpy,
radius 2.4 to 4 voxels: at most 0.013).  What is left: for particles smaller
than a voxel the grid cannot follow the shadow of one particle on the next:
it averages them (a cloud of them comes out slightly darker than the
discrete particles, exp of a mean optical depth being below the mean of
exps).

Variants: bounds and density by state layout, the blur by its source's format (shapes); the march's scene shadows
(``SCENE_SHADOWS``) a feature.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..look.look import COLOR_END, LOOK_RANDOM, LOOK_SEED, LOOK_TABLE, particle_values
from ..seam.kernels import Constant, Feature, Image, Kernel, Sampler, Shared
from ..seam.state import LAYOUTS

MAX_SHADOW_SLOTS = 4
DENSITY_SCALE = 256.0  # fixed-point units per optical depth across one voxel edge
MAX_PARTICLE_DEPTH = 16.0  # the most optical depth one particle adds to a voxel (e^-16: opaque)
# A particle's spread (the r / 2 of the particle model) in voxels of the level it splats into, from level 1 on
# (level 0 also holds spreads of 0.6 and 0.85 of its voxels, for particles smaller than that): 1.2 measured
# within 0.01 of the model (0.8: 0.045, 1.0: 0.026; above 1.2 the blur needs more taps for the same).
SPREAD = 1.2
BLUR_TAPS = 4  # the blur's taps each side of a voxel (sublevel_blur is at most SPREAD x sqrt(2) = 1.7 voxels)
MIN_LEVEL_SIZE = 4  # voxels a side of the coarsest density level
MIN_VOXEL = 2.0**-12  # the longest extent a grid is placed for at least (a single point particle)
DITHER_STREAM = 0x5AD0  # random_unit stream of the splat's dithered rounding (step: the corner)
# What a shadow slot's light is to the march: none, a direction (sun), a position (point, spot, area).
LIGHT_KINDS = {"NONE": 0, "DIRECTIONAL": 1, "POSITIONAL": 2}
BOUNDS_TEXELS = {"LOWER": 0, "UPPER": 3}  # the bounds image: lower x, y, z then upper x, y, z
VOLUME_GROUP = (4, 4, 4)
STEPS_PER_VOXEL = 1  # march steps per voxel edge of distance (2 measured no better, against the model or in motion)

# What a kernel that calls shadow_transmittance() (the light pass) declares: these resources and includes,
# bound from ShadowVolume.bindings().
SHADOW_RESOURCES = (Image("shadow_grid", "RGBA32F", "READ"), Sampler("transmittance", "FLOAT_3D"))
SHADOW_INCLUDES = ("shadow_grid.glsl", "shadow_volume.glsl")

_DEFINES = (("PI", "3.14159265"), ("DENSITY_SCALE", f"{DENSITY_SCALE:.1f}"),
            ("MAX_PARTICLE_DEPTH", f"{MAX_PARTICLE_DEPTH:.1f}"), ("MIN_VOXEL", f"{MIN_VOXEL!r}"),
            ("DITHER_STREAM", f"{DITHER_STREAM}u"), ("SPREAD", f"{SPREAD!r}"), ("SQRT2", "1.41421356"),
            ("BLUR_TAPS", str(BLUR_TAPS)),
            ("MIN_LEVEL_SIZE", str(MIN_LEVEL_SIZE)), ("STEPS_PER_VOXEL", f"{STEPS_PER_VOXEL:.1f}"), ("MAX_SHADOW_SLOTS", str(MAX_SHADOW_SLOTS)),
            *((f"LIGHT_{kind}", f"{code:.1f}") for kind, code in LIGHT_KINDS.items()),
            *((f"BOUND_{name}", str(texel)) for name, texel in BOUNDS_TEXELS.items()))
_GRID_WRITE = Image("shadow_grid", "RGBA32F", "WRITE")
_PARTICLE_CONSTANTS = (Constant("INT", "count"), Constant("VEC4", "state_origin"), COLOR_END, LOOK_RANDOM, LOOK_SEED)
# The particle kernels need a particle's size, never its color: particle_look.glsl's emission strength is
# defined away (a declared constant no code reads is optimised out, and Blender then refuses to bind it).
_SIZE_ONLY = (("emission_strength", "0.0"),)
_PARTICLE_INCLUDES = ("common.glsl", "random.glsl", "look.glsl", "particle_alive.glsl", "particle_look.glsl", "shadow_particle.glsl")


def _bounds_kernel(layout) -> Kernel:
    return Kernel("shadow_bounds", images=(*layout.images("READ"), LOOK_TABLE,
                                           Image("shadow_bounds", "R32UI", atomic=True)),
                  constants=_PARTICLE_CONSTANTS, includes=_PARTICLE_INCLUDES, defines=(*_DEFINES, *_SIZE_ONLY),
                  shared=(Shared("vec4", "s_lower", 256), Shared("vec4", "s_upper", 256)))


def _density_kernel(layout) -> Kernel:
    return Kernel("shadow_density", images=(*layout.images("READ"), LOOK_TABLE, SHADOW_RESOURCES[0],
                                            Image("shadow_density_sum", "R32UI", atomic=True, dimensions=3)),
                  constants=(*_PARTICLE_CONSTANTS, Constant("FLOAT", "extinction_scale")),
                  includes=(*_PARTICLE_INCLUDES, "shadow_grid.glsl", "shadow_levels.glsl"),
                  defines=(*_DEFINES, *_SIZE_ONLY))


# The march's feature (``for_effect(None, occluders=)``): the scene's meshes shadow the volume too, through their
# shadow maps (scene/light_shadows.py's OccluderMaps, which binds the depth and packs the constants).
SCENE_SHADOWS = Feature(
    "scene_shadows", defines=(("SCENE_SHADOWS", "1"),), samplers=(Sampler("occluder_depth"),),
    constants=(Constant("VEC4", "occluder_matrices", 4 * MAX_SHADOW_SLOTS),  # each slot's world to light clip
               Constant("VEC4", "occluder_tiles"),  # 1: slot k has a map
               Constant("FLOAT", "occluder_bias")),
    wants=lambda settings, frame: frame["occluders"] is not None,
    binds=lambda occluders: {"occluder_depth": occluders.depth}, source="occluders")
MARCH = Kernel("shadow_march", images=(SHADOW_RESOURCES[0], Image("transmittance", "RGBA16F", "WRITE", dimensions=3)),
               samplers=(Sampler("extinction", "FLOAT_3D"),),
               constants=(Constant("VEC4", "shadow_lights", MAX_SHADOW_SLOTS),),
               includes=("common.glsl", "shadow_grid.glsl"), local_size=VOLUME_GROUP, defines=_DEFINES,
               features=(SCENE_SHADOWS,))


BOUNDS_KERNELS = {name: _bounds_kernel(layout) for name, layout in LAYOUTS.items()}
PLACE = Kernel("shadow_place", images=(Image("shadow_bounds", "R32UI"), _GRID_WRITE),
               constants=(Constant("INT", "grid_resolution"),), local_size=(1, 1, 1), defines=_DEFINES)
DENSITY_KERNELS = {name: _density_kernel(layout) for name, layout in LAYOUTS.items()}
# One axis of the sublevels' blur: along x from the fixed-point sums, along y and z over floats.
BLUR_KERNELS = {source: Kernel("shadow_blur", images=(Image("blur_source", source, "READ", dimensions=3),
                                                      Image("blurred", "R32F", "WRITE", dimensions=3)),
                               constants=(Constant("INT", "axis"),), includes=("shadow_levels.glsl",),
                               local_size=VOLUME_GROUP, defines=_DEFINES) for source in ("R32UI", "R32F")}
RESOLVE = Kernel("shadow_resolve", images=(Image("blurred", "R32F", "READ", dimensions=3),
                                           Image("extinction", "R32F", "WRITE", dimensions=3)),
                 includes=("common.glsl", "shadow_levels.glsl"), local_size=VOLUME_GROUP, defines=_DEFINES)
# The tests' probe: shadow_transmittance() at given points, as the light pass calls it (a lab kernel).
SAMPLE = Kernel("shadow_sample", images=(Image("points", "RGBA32F", "READ"), Image("sampled", "RGBA32F", "WRITE"),
                                         SHADOW_RESOURCES[0]),
                samplers=SHADOW_RESOURCES[1:], constants=(Constant("INT", "count"),),
                includes=("common.glsl", *SHADOW_INCLUDES))
SHADOW_KERNELS = (*BOUNDS_KERNELS.values(), PLACE, *DENSITY_KERNELS.values(), *BLUR_KERNELS.values(), RESOLVE, MARCH,
                  SAMPLE)


def slot_lights(lights) -> np.ndarray:
    """(MAX_SHADOW_SLOTS, 4) rows of ``shadow_lights``: per slot, the direction toward a sun (xyz, unit) or the
    position of any other light, and its LIGHT_KINDS code in w; slots no light holds are NONE.

    ``lights``: lighting.Light-like objects (type, position, direction where it shines, shadow_slot)."""
    rows = np.zeros((MAX_SHADOW_SLOTS, 4), np.float32)
    for light in lights:
        slot = getattr(light, "shadow_slot", -1)
        if not 0 <= slot < MAX_SHADOW_SLOTS:
            continue
        if light.type == "SUN":
            toward = -np.asarray(light.direction, np.float64)
            rows[slot] = (*(toward / np.linalg.norm(toward)), LIGHT_KINDS["DIRECTIONAL"])
        else:
            rows[slot] = (*light.position, LIGHT_KINDS["POSITIONAL"])
    return rows


def level_sizes(resolution: int) -> list[int]:
    """Voxels a side of each density level (shadow_levels.glsl), finest first."""
    sizes = [resolution]
    while -(-resolution // 2 ** len(sizes)) >= MIN_LEVEL_SIZE:
        sizes.append(-(-resolution // 2 ** len(sizes)))
    return sizes


def sublevel_level(sublevel: int) -> int:
    """The level sublevel ``sublevel`` lies on (shadow_levels.glsl): 0 to 3 on level 0, then two a level."""
    return max(sublevel - 2, 0) // 2


def sublevel_sizes(resolution: int) -> list[int]:
    """Voxels a side of each density sublevel, in the order they are stacked."""
    sizes = level_sizes(resolution)
    return [sizes[sublevel_level(sublevel)] for sublevel in range(2 * len(sizes) + 2)]


def extinction_scale(settings) -> float:
    """The cross-section a particle casts per pi r^2 (contract: density x shadow density)."""
    return float(settings.density) * float(settings.shadow_density)


@dataclass
class OccluderMaps:
    """The scene occluders' depth from each shadow slot's light (addon/scene/light_shadows.py draws them):
    one DEPTH32F atlas of MAX_SHADOW_SLOTS tiles side by side, slot k in tile k, and each slot's world to
    light clip matrix (None: no map, that slot is not shadowed by the scene)."""

    depth: object  # a host Texture, (MAX_SHADOW_SLOTS * tile) x tile
    matrices: tuple  # MAX_SHADOW_SLOTS of (4, 4) arrays or None
    bias: float = 1e-4  # window depth a voxel must lie beyond an occluder's to be in its shadow

    def constants(self) -> dict:
        columns = np.zeros((4 * MAX_SHADOW_SLOTS, 4), np.float32)
        tiles = [0.0] * MAX_SHADOW_SLOTS
        for slot, matrix in enumerate(self.matrices):
            if matrix is not None:
                columns[4 * slot:4 * slot + 4] = np.asarray(matrix, np.float32).T
                tiles[slot] = 1.0
        return {"occluder_matrices": columns, "occluder_tiles": tuple(tiles), "occluder_bias": self.bias}


class ShadowVolume:
    """One shadow volume shared by every lit effect of a view: each effect's particles shadow the others'.

    ``build`` records a frame's passes; ``bindings()`` is what the light pass binds for SHADOW_RESOURCES."""

    def __init__(self, host, resolution: int = 64):
        self.host = host
        self.resolution = resolution
        size = (resolution,) * 3
        self.bounds = host.texture("shadow_bounds", 6, 1, "R32UI")
        self.grid = host.texture("shadow_grid", 1, 1, "RGBA32F")
        stack = (sum(sublevel_sizes(resolution)), resolution, resolution)
        self.density_sum = host.volume("shadow_density_sum", shape=stack, format="R32UI")
        self.blurred = [host.volume("blurred", shape=stack, format="R32F") for _ in range(2)]
        self.stack_groups = tuple(-(-extent // g) for extent, g in zip(stack[::-1], VOLUME_GROUP))
        self.extinction = host.volume("extinction", shape=size, format="R32F")
        self.transmittance = host.volume("transmittance", shape=size, format="RGBA16F")
        for sampled in (self.extinction, self.transmittance):
            host.sampling(sampled, linear=True)
        self.groups = tuple(-(-resolution // g) for g in VOLUME_GROUP)

    def bindings(self) -> dict:
        return {"shadow_grid": self.grid, "transmittance": self.transmittance}

    def build(self, systems, lights, occluders: OccluderMaps | None = None) -> None:
        """The transmittance of this frame toward each shadow slot's light in ``lights``, through every
        system's particles (``systems``: (ParticleSystem, look table texture) of each lit effect).  No slot
        taken, or no lit particle: no grid (``shadow_transmittance`` is 1 everywhere)."""
        rows = slot_lights(lights)
        if not systems or not rows[:, 3].any():
            self.host.clear(self.grid)
            return
        self.place(systems)
        self.splat(systems)
        self.blur()
        self.resolve()
        self.march(rows, occluders)

    def place(self, systems) -> None:
        """shadow_bounds over every system, then shadow_place."""
        for system, look in systems:
            self._dispatch_particles(BOUNDS_KERNELS, system, look, {"shadow_bounds": self.bounds}, {})
        self.host.dispatch(PLACE, (1, 1, 1), {"shadow_bounds": self.bounds, "shadow_grid": self.grid},
                           {"grid_resolution": self.resolution})

    def splat(self, systems) -> None:
        """The density sums emptied, then every system that casts shadows splatted."""
        self.host.clear(self.density_sum)
        for system, look in systems:
            scale = extinction_scale(system.settings)
            if scale > 0.0:
                self._dispatch_particles(DENSITY_KERNELS, system, look,
                                         {"shadow_grid": self.grid, "shadow_density_sum": self.density_sum},
                                         {"extinction_scale": scale})

    def blur(self) -> None:
        """The sublevels blurred along x (sums to floats), y and z, ping-ponging ``blurred``; the result in
        ``blurred[0]``."""
        source = self.density_sum
        for axis, target in enumerate((self.blurred[0], self.blurred[1], self.blurred[0])):
            self.host.dispatch(BLUR_KERNELS[source.format], self.stack_groups, {"blur_source": source,
                                                                                "blurred": target}, {"axis": axis})
            source = target

    def resolve(self) -> None:
        self.host.dispatch(RESOLVE, self.groups, {"blurred": self.blurred[0], "extinction": self.extinction}, {})

    def march(self, rows: np.ndarray, occluders: OccluderMaps | None = None) -> None:
        """The transmittance toward the slots' lights (``slot_lights`` rows), times the occluders' shadow."""
        kernel = MARCH.for_effect(None, occluders=occluders)
        self.host.dispatch(kernel, self.groups, {"shadow_grid": self.grid, "transmittance": self.transmittance,
                                                 "extinction": self.extinction,
                                                 **kernel.bindings(occluders=occluders)},
                           {"shadow_lights": rows, **(occluders.constants() if occluders is not None else {})})

    def _dispatch_particles(self, kernels, system, look, textures: dict, constants: dict) -> None:
        kernel = kernels[system.layout.name]
        declared = {constant.name for constant in kernel.constants}
        sizes = {name: value for name, value in particle_values(system).items() if name in declared}
        self.host.dispatch(kernel, system.groups, {**system.textures, "look": look, **textures},
                           {"count": system.count, **sizes, **constants})

    def sample(self, points: np.ndarray) -> np.ndarray:
        """shadow_transmittance() at (n, 3) world points, read back (tests and checks)."""
        n = len(points)
        width = max(1, min(n, 4096))
        rows = -(-max(n, 1) // width)
        padded = np.zeros((rows * width, 4), np.float32)
        padded[:n, :3] = points
        image = self.host.texture("points", width, rows, "RGBA32F", padded.reshape(rows, width, 4))
        sampled = self.host.texture("sampled", width, rows, "RGBA32F")
        self.host.dispatch(SAMPLE, SAMPLE.groups_for(width, rows), {"points": image, "sampled": sampled,
                                                                     **self.bindings()}, {"count": n})
        return self.host.read(sampled).reshape(-1, 4)[:n]
