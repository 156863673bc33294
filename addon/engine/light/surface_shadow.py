"""Particle shadows on the scene's surfaces: how much each visible surface darkens under the particles.

Per frame, after the shadow volume (``shadow_volume.py``) holds the particles' transmittance toward each
shadowed light, ``shaders/surface_shadow.glsl`` runs once per pixel of the scene depth the depth pre-pass drew
(``addon/scene/depth_prepass.py``: the meshes the render sees, the camera's own projection, perspective or
orthographic, wherever the camera is):

- the surface's world position from its depth, its normal from the depth of the neighbours on the same
  surface (the nearer side of each axis: an edge's far side is another surface);
- T_l, the transmittance toward each light l with a shadow slot: the volume sampled where the ray from the
  surface toward the light enters the grid (the surface itself when inside it; 1 when the ray misses the grid
  or the light lies before it), through a cubic B-spline over its voxels (8 trilinear taps): the coarse grid
  casts soft shadows without bands, deterministically (no jitter);
- the factor the surface's color is multiplied by, each light weighted by its share of the surface's
  lighting as a white diffuse surface receives it (lighting.py's irradiance E_l times the cosine at the
  surface, over pi) against the World's ambient radiance W, in luminance::

      factor = (W + sum_l T_l E_l max(cos, 0) / pi) / (W + sum_l E_l max(cos, 0) / pi)

  so under a lone sun and a black World the surface takes the particles' transmittance exactly, a surface
  turned from the light does not darken, and a bright World fills the shadow in.

The kernel writes the darkening ``1 - factor`` (R32F): 0 where there is no surface or no shadow, so that an
empty (never filled) image is no shadow.  What is approximate: only the first surface the camera sees
receives (what the depth pre-pass draws: meshes, not volumes, curves or displacement the engine adds), the
estimate knows nothing of the surface's material or of the scene's own shadows (a surface already in a
mesh's shadow darkens by the light's share as if it were lit), and lights' powers are their volume power
(what lights the particles).
"""

from __future__ import annotations

import math

import numpy as np

from ..look.lighting import MAX_LIGHTS, MIN_DISTANCE_SQUARED, SceneLights, is_lit, light_rows
from ..seam.kernels import Constant, Image, Kernel, Sampler
from ..seam.records import LIGHT
from .shadow_volume import SHADOW_RESOURCES, ShadowVolume

SURFACE_SHADOW = Kernel(
    "surface_shadow",
    images=(SHADOW_RESOURCES[0], Image("surface_shadow", "R32F", "WRITE")),
    samplers=(SHADOW_RESOURCES[1], Sampler("scene_depth")),
    constants=(Constant("MAT4", "clip_to_world"), Constant("INT", "light_count"),
               Constant("VEC4", "lights", MAX_LIGHTS * LIGHT.texels),
               Constant("VEC4", "lit_ambient", components=(("ambient", "xyz"),))),
    includes=("common.glsl", "shadow_grid.glsl", "lighting.glsl"), local_size=(16, 16, 1),
    defines=(("PI", f"{math.pi:.9f}"), ("MIN_DISTANCE_SQUARED", f"{MIN_DISTANCE_SQUARED:.1e}")))
NEEDS_DEPTH = ("Shadows on Scene need Occlusion: Scene (the scene's depth): the particles' shadows on the scene's "
               "surfaces are skipped")


def casts_on_scene(settings) -> bool:
    """Whether an effect's particles shadow the scene's surfaces: lit, with Shadows on Scene on."""
    return is_lit(settings) and bool(settings.shadows_on_scene)


class SurfaceShadow:
    """The darkening of a view's surfaces (``image``, R32F, the view's size) and the shadow volume it reads when
    the frame's own cannot serve (below); ``drawn``: whether ``image`` holds this frame's shadow."""

    def __init__(self, host, width: int, height: int):
        self.host = host
        self.image = host.texture("surface_shadow", width, height, "R32F")
        self.drawn = False
        self._volume: ShadowVolume | None = None

    def draw(self, systems, lights: SceneLights, camera, resources, shadows: ShadowVolume | None,
             occluded: bool) -> None:
        """The darkening under ``systems`` that cast on the scene, seen through ``camera`` (its view_proj), from
        ``resources.depth``; nothing drawn (``drawn`` False) without scene depth, shadowed light or caster.

        The frame's volume (``shadows``, built by the light pass) serves when it holds exactly these casters and
        no scene occluder's shadow (``occluded``: a surface would shadow itself); otherwise a volume of the
        casters alone is built here."""
        casting = [system for system in systems if casts_on_scene(system.settings)]
        self.drawn = bool(casting and lights.shadowed and shadows is not None and resources.depth is not None)
        if not self.drawn:
            return
        volume = shadows
        if occluded or len(casting) != sum(is_lit(system.settings) for system in systems):
            if self._volume is None or self._volume.resolution != shadows.resolution:
                self._volume = ShadowVolume(self.host, shadows.resolution)
            volume = self._volume
            volume.build([(system, resources.look_texture(system)) for system in casting], lights.lights)
        self.host.dispatch(SURFACE_SHADOW, SURFACE_SHADOW.groups_for(self.image.width, self.image.height),
                           {"surface_shadow": self.image, "scene_depth": resources.depth.depth, **volume.bindings()},
                           constants(lights, camera.view_proj))


def constants(lights: SceneLights, view_proj) -> dict:
    """The kernel's constants: the camera's clip to world, the lights and the World's ambient."""
    return {"clip_to_world": np.linalg.inv(np.asarray(view_proj, np.float64)), "light_count": len(lights.lights),
            "lights": light_rows(lights.lights), "lit_ambient": (*lights.ambient, 0.0)}
