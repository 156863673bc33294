"""Rasterized particles: GL_POINTS (the splat's classic peer) and textured sprite quads.

Untextured SPRITE and STRETCHED quads are drawn by tiles in compute
(quad_tiles.py: the rasterizer's fill and blending were the cost on compute
GPUs); ``draw`` still rasterizes them all, as that path's peer
(bench/quad_peer.py) and the tests' measure of it.

Every vertex pulls its particle from the state textures with texelFetch
(gl_VertexID for points, gl_InstanceID for the 6-vertex quads), so nothing
is copied through the CPU; fragments add into an RGBA16F target that the
resolve adds to the splat.  Depth-tested against the scene depth when there
is one, with the same "hidden when farther" rule as the splat.
"""

from __future__ import annotations

from ..look.lighting import LOOK_FEATURES
from ..look.look import COLOR_END, COLOR_START, LOOK_RANDOM, LOOK_SEED, LOOK_TABLE, PARTICLE_STATE, particle_values
from ..look.sprite_sheets import RELIEF_QUADS, TEXTURED_QUADS, QuadSheets, SpriteSheets, is_textured, quad_values
from ..seam.kernels import Constant, Raster
from .footprint import DEPTH_OF_FIELD, MOTION_BLUR, declared_footprint_constants

CONSTANTS = (
    Constant("INT", "count"),
    Constant("MAT4", "view_proj"),
    COLOR_START,
    COLOR_END,
    Constant("VEC4", "raster_params", components=(
        ("pixel_scale", "x"),  # pixels per world unit at clip w = 1
        ("stretch_seconds", "y"),  # quads: the tail is where the particle was this long ago
        ("target_extent", "zw"),  # the target's width and height in pixels
    )),
    Constant("VEC4", "state_origin"),  # xyz: what stored positions are relative to (simulation.py)
    LOOK_RANDOM,
    LOOK_SEED,
)
INCLUDES = ("common.glsl", "random.glsl", "look.glsl", "particle_alive.glsl", "particle_look.glsl", "particle_fetch.glsl")

POINTS = Raster("raster_points", images=(LOOK_TABLE,), samplers=PARTICLE_STATE, constants=CONSTANTS, includes=INCLUDES,
                varyings=(("VEC3", "v_color"),), features=LOOK_FEATURES)
QUAD_VERTICES = 6  # two triangles per particle
# Particles an instance of the quads draws: vertex warps of 32 lanes filled (96 vertices), where one 6-vertex
# instance a particle can leave 26 lanes idle; the triangles keep their order, so the blend adds in the same order.
# Within noise of one quad an instance for 4M stretched sparks, whose fill is the cost
# (bench/results/h200-2026-11-26-events-59585ef.json; bench/README.md's dated logs hold the run before).
QUADS_PER_INSTANCE = 16
# Its features (``for_effect(settings, camera=, textured=)``): an effect's sprite image, posed (and shaded by its
# lights: relief), stretched over the camera's shutter (motion blur), widened by its circle of confusion (depth of
# field), then its look.
QUADS = Raster("raster_quads", images=(LOOK_TABLE,), samplers=PARTICLE_STATE, constants=CONSTANTS,
               includes=(*INCLUDES, "quad_falloff.glsl", "quad_frame.glsl"),
               varyings=(("VEC3", "v_color"), ("VEC2", "v_corner"), ("VEC4", "v_sweep")),
               defines=(("QUADS_PER_INSTANCE", str(QUADS_PER_INSTANCE)),),
               features=(TEXTURED_QUADS, RELIEF_QUADS, MOTION_BLUR, DEPTH_OF_FIELD, *LOOK_FEATURES))


def constants(system, camera, stretch: float, kernel: Raster = POINTS) -> dict:
    """``kernel``'s constants (the shutter's and focus too, where it declares them)."""
    return {**declared_footprint_constants(camera, kernel), **{
        "count": system.count,
        "view_proj": camera.view_proj,
        **particle_values(system),
        "raster_params": (camera.pixels_per_unit, stretch, camera.width, camera.height),
    }}


def stretch_seconds(settings) -> float:
    """How long ago a quad's tail was where it is drawn: the Stretched type's stretch, 0 for the others."""
    return settings.stretch if settings.particle_type == "STRETCHED" else 0.0


def draw(host, system, camera, target, depth, look, sheets: SpriteSheets | None = None) -> None:
    """Rasterize one effect additively into ``target`` by its particle type (``look``: its look table;
    ``sheets``: where a textured effect's sprite image is kept, sprite_sheets.py)."""
    textures = {"pos_age": system.pos_age, "vel_life": system.vel_life, "look": look}
    kind = system.settings.particle_type
    if kind == "POINT":
        kernel = POINTS.for_effect(system.settings)
        host.draw(kernel, "POINTS", system.count, 1, target, depth, {**textures, **kernel.bindings(system=system)},
                  constants(system, camera, 0.0))
    else:
        stretch = stretch_seconds(system.settings)
        textured = sheets is not None and is_textured(system.settings)
        kernel = QUADS.for_effect(system.settings, camera=camera, textured=textured)
        host.draw(kernel, "TRIS", QUAD_VERTICES * QUADS_PER_INSTANCE, -(-system.count // QUADS_PER_INSTANCE), target,
                  depth, {**textures, **kernel.bindings(system=system, sheets=QuadSheets(sheets, system))},
                  {**constants(system, camera, stretch, kernel), **(quad_values(system.settings) if textured else {})})
