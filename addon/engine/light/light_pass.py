"""The light pass: each lit effect's particles lit by the scene's lights, once per drawn frame and view.

Per frame (``light_effects``, from ``pipeline.record_frame`` before anything is drawn): the shadow volume of the
lit effects' particles toward the shadowed lights (shadow_volume.py), then per lit effect ``light_particles``:
``shaders/light_particles.glsl`` writes the radiance each particle scatters toward the camera (lighting.py's
formula) into the effect's ``particle_light`` image, laid out like its state.  The drawing kernels (splat,
points, quads, sprites, bokeh) read it in ``particle_color`` (their ``lighting.LIT`` feature), so every path
(viewport, bake, final render) draws the same lit particles.  The phase function depends on the view: the pass
runs for each view it is drawn from.
"""

from __future__ import annotations

import math

import numpy as np

from ..look.lighting import MAX_LIGHTS, MIN_DISTANCE_SQUARED, RADIANCE_LIMIT, SceneLights, is_lit, light_rows
from ..look.look import COLOR_END, LOOK_RANDOM, LOOK_SEED, LOOK_TABLE, PARTICLE_STATE, particle_values
from ..look.sprite_sheets import PARTICLE_LIGHT_DIRECTION, has_relief
from ..seam.kernels import Constant, Feature, Image, Kernel
from ..seam.records import LIGHT
from .shadow_volume import SHADOW_INCLUDES, SHADOW_RESOURCES

PARTICLE_LIGHT_FORMAT = "RGBA16F"  # half floats: radiance to 65504 (lighting.RADIANCE_LIMIT)

_CONSTANTS = (
    Constant("INT", "count"),
    Constant("VEC4", "state_origin"),
    COLOR_END,
    LOOK_RANDOM,
    LOOK_SEED,
    Constant("INT", "light_count"),
    Constant("VEC4", "lights", MAX_LIGHTS * LIGHT.texels),  # records.LIGHT rows (lighting.light_rows)
    Constant("VEC4", "lit_view", components=(("eye", "xyz"), ("anisotropy", "w"))),  # camera position, HG g
    Constant("VEC4", "lit_albedo", components=(("albedo_birth", "xyz"),)),
    Constant("VEC4", "lit_albedo_end", components=(("albedo_death", "xyz"),)),
    Constant("VEC4", "lit_ambient", components=(("ambient", "xyz"),)),  # the World's radiance
)
_INCLUDES = ("common.glsl", "random.glsl", "look.glsl", "particle_alive.glsl", "particle_look.glsl", "particle_fetch.glsl", "lighting.glsl")
# (the pass reads the particles' sizes, not their emission: emission_strength is no constant here)
_DEFINES = (("PI", f"{math.pi:.9f}"), ("RADIANCE_LIMIT", f"{RADIANCE_LIMIT:.1f}"),
            ("MIN_DISTANCE_SQUARED", f"{MIN_DISTANCE_SQUARED:.1e}"), ("emission_strength", "0.0"))


# Lights with a shadow slot read the shadow volume's transmittance (the frame has one, with shadowed lights).
SHADOWED = Feature("shadowed", defines=(("SHADOW_VOLUME", "1"),),
                   images=tuple(r for r in SHADOW_RESOURCES if isinstance(r, Image)),
                   samplers=tuple(r for r in SHADOW_RESOURCES if not isinstance(r, Image)), includes=SHADOW_INCLUDES,
                   wants=lambda settings, frame: frame["shadowed"], binds=lambda shadows: shadows.bindings(),
                   source="shadows")
# Where the light comes from, on the camera's axes (world space), into particle_light_direction too: an effect
# with relief.
DIRECTION = Feature("direction", defines=(("LIGHT_DIRECTION", "1"),),
                    images=(Image(PARTICLE_LIGHT_DIRECTION.name, PARTICLE_LIGHT_FORMAT, "WRITE"),),
                    constants=(Constant("VEC4", "lit_right"), Constant("VEC4", "lit_up")),
                    wants=lambda settings, frame: has_relief(settings),
                    binds=lambda draw: {PARTICLE_LIGHT_DIRECTION.name: _particle_image(
                        *draw, PARTICLE_LIGHT_DIRECTION.name)}, source="draw")  # draw: (host, system)
LIGHT_PARTICLES = Kernel(
    "light_particles", images=(LOOK_TABLE, Image("particle_light", PARTICLE_LIGHT_FORMAT, "WRITE")),
    samplers=PARTICLE_STATE, constants=_CONSTANTS, includes=_INCLUDES, defines=_DEFINES, features=(SHADOWED, DIRECTION))


def camera_position(view: np.ndarray) -> np.ndarray:
    """The world position of a view (world to view matrix): where the phase function looks from."""
    return np.linalg.inv(np.asarray(view, np.float64))[:3, 3]


def _particle_image(host, system, attribute: str):
    """``system``'s per-slot light image ``attribute`` (made on first use and when its state grows)."""
    image = getattr(system, attribute)
    if image is None or image.shape[:2] != system.pos_age.shape[:2]:
        image = host.texture(attribute, system.pos_age.width, system.pos_age.height, PARTICLE_LIGHT_FORMAT)
        setattr(system, attribute, image)
    return image


def light_particles(host, system, lights: SceneLights, view, look, shadows=None) -> None:
    """Write ``system``'s ``particle_light`` lit by ``lights`` seen through ``view`` (world to view), and, for an
    effect with relief, its ``particle_light_direction``; ``look``: its look table texture; ``shadows``: the
    frame's built shadow volume, or None (T = 1)."""
    s = system.settings
    kernel = LIGHT_PARTICLES.for_effect(s, shadowed=shadows is not None and bool(lights.shadowed))
    view = np.asarray(view, np.float64)
    directed = DIRECTION.name in kernel.chosen
    direction = {"lit_right": (*view[0, :3], 0.0), "lit_up": (*view[1, :3], 0.0)} if directed else {}
    host.dispatch(
        kernel, system.groups,
        {**system.textures, "look": look, "particle_light": _particle_image(host, system, "particle_light"),
         **kernel.bindings(draw=(host, system), shadows=shadows)},
        {"count": system.count, **_without("color_start", particle_values(system)),
         "light_count": len(lights.lights), "lights": light_rows(lights.lights),
         "lit_view": (*map(float, camera_position(view)), s.anisotropy), "lit_albedo": (*s.albedo, 0.0),
         "lit_albedo_end": (*s.albedo_end, 0.0), "lit_ambient": (*lights.ambient, 0.0), **direction},
    )


def _without(name: str, values: dict) -> dict:
    return {key: value for key, value in values.items() if key != name}


def light_effects(systems, lights: SceneLights, view, resources, shadows=None, occluders=None) -> None:
    """The light pass of every lit system of a frame seen through ``view`` (world to view): the shadow volume
    through all of them first (``shadows``: a ShadowVolume, None: unshadowed; ``occluders``: the scene's shadow
    maps for it), then each one's light; ``resources``: the frame's FrameResources (look textures)."""
    lit = [(system, resources.look_texture(system)) for system in systems if is_lit(system.settings)]
    if not lit:
        return
    if shadows is not None:
        shadows.build(lit, lights.lights, occluders)
    for system, look in lit:
        light_particles(resources.host, system, lights, view, look, shadows)
