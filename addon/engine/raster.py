"""Rasterized particles: GL_POINTS (the splat's classic peer), sprites, stretched quads.

Every vertex pulls its particle from the state textures with texelFetch
(gl_VertexID for points, gl_InstanceID for the 6-vertex quads), so nothing
is copied through the CPU; fragments add into an RGBA16F target that the
resolve adds to the splat.  Depth-tested against the scene depth when there
is one, with the same "hidden when farther" rule as the splat.
"""

from __future__ import annotations

from .kernels import Constant, Raster, Sampler

_STATE = (Sampler("pos_age"), Sampler("vel_life"))
_CONSTANTS = (
    Constant("INT", "count"),
    Constant("MAT4", "view_proj"),
    Constant("VEC4", "color_start"),  # rgb, w: emission strength
    Constant("VEC4", "color_end"),  # rgb, w: world radius
    Constant("VEC4", "raster_params"),  # x: pixels per unit at w=1, y: stretch seconds, zw: target size
)
_INCLUDES = ("common.glsl", "particle_look.glsl")

POINTS = Raster("raster_points", samplers=_STATE, constants=_CONSTANTS, includes=_INCLUDES,
                varyings=(("VEC3", "v_color"),))
QUADS = Raster("raster_quads", samplers=_STATE, constants=_CONSTANTS, includes=_INCLUDES,
               varyings=(("VEC3", "v_color"), ("VEC2", "v_corner")))

QUAD_VERTICES = 6  # two triangles per particle


def constants(system, camera, stretch: float) -> dict:
    s = system.settings
    return {
        "count": system.count,
        "view_proj": camera.view_proj,
        "color_start": (*s.color_start, s.emission_strength),
        "color_end": (*s.color_end, s.size),
        "raster_params": (camera.pixels_per_unit, stretch, camera.width, camera.height),
    }


def draw(host, system, camera, target, depth) -> None:
    """Rasterize one effect additively into ``target`` by its particle type."""
    textures = {"pos_age": system.pos_age, "vel_life": system.vel_life}
    kind = system.settings.particle_type
    if kind == "POINT":
        host.draw(POINTS, "POINTS", system.count, 1, target, depth, textures, constants(system, camera, 0.0))
    else:
        stretch = system.settings.stretch if kind == "STRETCHED" else 0.0
        host.draw(QUADS, "TRIS", QUAD_VERTICES, system.count, target, depth, textures,
                  constants(system, camera, stretch))
