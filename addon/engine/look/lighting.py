"""Lit particles: Blender's lights, their radiometry, and how a lit particle's radiance is worked out.

A lit particle scatters the light that reaches it toward the camera.  Its radiance
(``shaders/light_particles.glsl``, one RGB per particle slot, reference/look/lighting.py)::

    L = albedo(t) * (ambient + sum_l E_l(p) / pi * phase(g, cos theta_l) * T_l(p))

- ``albedo(t)``: the effect's albedo at birth to albedo_end at death, linear in age / lifetime;
- ``ambient``: the World's color (a uniform environment of radiance W lights a white diffuse surface to W);
- ``E_l(p)``: the irradiance a surface at p facing light l receives (below), in Blender's light units;
- ``phase(g, c) = (1 - g^2) / (1 + g^2 - 2 g c)^1.5``: Henyey-Greenstein times 4 pi, so 1 at g = 0: an isotropic
  particle of albedo 1 then has exactly the radiance E / pi of a white diffuse surface facing the light;
- ``theta_l``: the angle between the light's travel direction (from the light to p; a sun's direction) and the
  direction from p to the camera: g > 0 is bright looking into the light;
- ``T_l(p)``: the transmittance toward the light through the particles (shadow_volume.py), 1 for a light
  without a shadow slot.

Irradiance E per light type, with ``radiant`` = color x power (``Light.radiant``), d the distance from the
light's center to p, theta the angle at the light between its direction and p::

    SUN    E = radiant                                  (strength S in W/m^2: E = S)
    POINT  E = radiant / (4 pi (d^2 + r^2))             (P watts, a sphere of radius r)
    SPOT   E = POINT x smoothstep(0, 1, (cos theta - cos(size / 2)) / ((1 - cos(size / 2)) x blend))
    AREA   rectangle (square, rectangle) of half sides a, b, area A = 4ab, on its axis exactly:
           E = radiant / (pi A) x 2 (a / sqrt(a^2 + d^2) atan(b / sqrt(a^2 + d^2))
                                     + b / sqrt(b^2 + d^2) atan(a / sqrt(b^2 + d^2))) x max(cos theta, 0)
           disc (disk, ellipse: the disc of the same area, R^2 = ab), on its axis exactly:
           E = radiant / (pi (R^2 + d^2)) x max(cos theta, 0)
           (off the axis both take the on-axis value at that distance times the cosine at the light: exact far
           from the light, an approximation within a few sizes of it)

Verified against Blender 5.2.3 (tests/engine/light/test_lighting.py renders a white diffuse plane facing each light with
Cycles, 8x8 pixels, World black, view transform Standard; the pixel is E / pi within 1%): sun, point and spot
(spot with blend off its axis), a point of radius r (Cycles' sphere light gives r^2 in the denominator: 0.8 of
the point value at r = d / 2), small and large squares, a disc and a 2:1 rectangle (the equal-area disc would be
3.5% too dark there, hence the rectangle's own formula), a tilted area light (the cosine at the light).  EEVEE
gives the same pixels for sun and point (its spot mask is the same smoothstep: eevee light_shared.glsl).
Lights' object scale, a spot's non-round cone and area lights' spread are not modelled.

A light inside the cloud: a point or spot light's radius is taken at least as large as the lit particle's own
world radius, so a particle at the light gets a finite irradiance (the light as a sphere as large as it).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ..seam.kernels import Feature, Sampler
from ..seam.records import LIGHT
from ..seam.tables import LIGHT_TYPES
from .look import PARTICLE_TINT, inherits_color

MAX_LIGHTS = 32  # lights one frame lights the particles with (the brightest at the lit effects)
MAX_SHADOWED_LIGHTS = 4  # lights that cast particle shadows: one channel each of the transmittance volume
MAX_POWER = 1e9  # W, W/m^2: stronger lights are clamped (half-float radiance saturates long before)
MIN_AREA_HALF_SIZE = 1e-6  # a zero-sized area light is a tiny one (its formula divides by the area)
MIN_DISTANCE_SQUARED = 1e-12  # a point light's d^2 + r^2 at least (a particle of no size at the light: finite)
RADIANCE_LIMIT = 65504.0  # the largest half float: particle_light (RGBA16F) saturates there, never inf
AREA_DISCS = ("DISK", "ELLIPSE")  # Blender's area shapes lit as a disc; SQUARE and RECTANGLE as a rectangle

# The light pass's radiance per particle slot, read by every drawing kernel of a lit effect.
PARTICLE_LIGHT = Sampler("particle_light")


@dataclass(frozen=True)
class Light:
    """One of the scene's lights, in world space and Blender's units."""

    type: str  # SUN, POINT, SPOT or AREA
    color: tuple[float, float, float]
    power: float  # W (point, spot, area); W/m^2 (sun: its strength)
    position: tuple[float, float, float]
    direction: tuple[float, float, float] = (0.0, 0.0, -1.0)  # unit, where it shines (its local -Z)
    spot_size: float = math.pi / 4  # the cone's full angle
    spot_blend: float = 0.15
    area_shape: str = "SQUARE"  # SQUARE, RECTANGLE, DISK or ELLIPSE
    size_x: float = 0.0  # area: side or diameter along its local X
    size_y: float = 0.0  # ... along its local Y
    radius: float = 0.0  # point, spot: the sphere's radius (Blender's shadow_soft_size)
    shadow: bool = True  # may cast particle shadows (Blender's use_shadow)
    name: str = ""
    shadow_slot: int = -1  # channel of the transmittance volume; -1: no particle shadow

    @property
    def kind(self) -> int:
        """Its tables.LIGHT_TYPES code (area lights: rectangle or disc)."""
        if self.type == "AREA":
            return LIGHT_TYPES["AREA_DISC" if self.area_shape in AREA_DISCS else "AREA_RECTANGLE"]
        return LIGHT_TYPES[self.type]

    @property
    def radiant(self) -> np.ndarray:
        return np.asarray(self.color, np.float64) * self.power

    @property
    def half_size(self) -> tuple[float, float]:
        return (max(self.size_x / 2, MIN_AREA_HALF_SIZE), max(self.size_y / 2, MIN_AREA_HALF_SIZE))


@dataclass(frozen=True)
class SceneLights:
    """What lights the lit effects in one frame: the lights (shadow slots assigned), the World's ambient radiance
    and what was wrong with the scene's lights (scene/lights.py reads them)."""

    lights: tuple[Light, ...] = ()
    ambient: tuple[float, float, float] = (0.0, 0.0, 0.0)
    warnings: tuple[str, ...] = ()

    @property
    def shadowed(self) -> tuple[Light, ...]:
        """The lights that cast particle shadows, by slot."""
        return tuple(sorted((light for light in self.lights if light.shadow_slot >= 0), key=lambda light: light.shadow_slot))

    @property
    def dark(self) -> bool:
        """Nothing lights the particles: no light and a black World."""
        return not self.lights and not any(self.ambient)


NO_LIGHTS = SceneLights()


def phase(g: float, cos_theta) -> np.ndarray:
    """Henyey-Greenstein times 4 pi (1 at g = 0) at the cosine between travel and view directions."""
    g = float(g)
    return (1.0 - g * g) / (1.0 + g * g - 2.0 * g * np.asarray(cos_theta, np.float64)) ** 1.5


def _smoothstep(x):
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def irradiance(light: Light, points, min_radius=0.0) -> tuple[np.ndarray, np.ndarray]:
    """(E, travel) at (n, 3) world ``points``: the irradiance (n, 3) a surface facing the light gets there (the
    module's formulas) and the unit direction the light travels there (n, 3); ``min_radius`` (one or (n,)): the
    least radius of a point or spot light there (the particle's)."""
    points = np.asarray(points, np.float64).reshape(-1, 3)
    radiant = light.radiant
    direction = np.asarray(light.direction, np.float64)
    if light.type == "SUN":
        return np.broadcast_to(radiant, points.shape).copy(), np.broadcast_to(direction, points.shape).copy()
    offset = points - np.asarray(light.position, np.float64)
    d2 = np.einsum("ij,ij->i", offset, offset)
    d = np.sqrt(d2)
    travel = np.where(d[:, None] > 0.0, offset / np.where(d > 0.0, d, 1.0)[:, None], direction)
    cos_theta = travel @ direction
    if light.type in ("POINT", "SPOT"):
        r = np.maximum(light.radius, min_radius)
        scale = 1.0 / (4.0 * math.pi * np.maximum(d2 + r * r, MIN_DISTANCE_SQUARED))
        if light.type == "SPOT":
            scale = scale * spot_mask(light, cos_theta)
    else:
        a, b = light.half_size
        if light.area_shape in AREA_DISCS:
            on_axis = 1.0 / (math.pi * (a * b + d2))
        else:
            da, db = np.sqrt(a * a + d2), np.sqrt(b * b + d2)
            on_axis = 2.0 / (math.pi * 4.0 * a * b) * (a / da * np.arctan(b / da) + b / db * np.arctan(a / db))
        scale = on_axis * np.maximum(cos_theta, 0.0)
    return scale[:, None] * radiant, travel


def spot_mask(light: Light, cos_theta) -> np.ndarray:
    """Blender's spot cone: 1 inside, smoothstep over the blend, 0 outside (a hard edge at blend 0)."""
    cos_half = math.cos(light.spot_size / 2)
    smooth = (1.0 - cos_half) * light.spot_blend
    if smooth <= 0.0:
        return (np.asarray(cos_theta) > cos_half).astype(np.float64)
    return _smoothstep((np.asarray(cos_theta) - cos_half) / smooth)


def assign_shadow_slots(lights, at) -> tuple[tuple[Light, ...], list[str]]:
    """``lights`` brightest first at ``at`` (a world point: the lit effects' emitters), at most MAX_LIGHTS; the
    first MAX_SHADOWED_LIGHTS with shadows on take shadow slots 0, 1, ...  Warnings name the lights left out and,
    when more could cast particle shadows, which do."""
    at = np.asarray(at, np.float64).reshape(1, 3)
    ranked = sorted(lights, key=lambda light: -float(irradiance(light, at)[0].sum()))
    warnings = []
    if len(ranked) > MAX_LIGHTS:
        dropped = ", ".join(light.name for light in ranked[MAX_LIGHTS:])
        warnings.append(f"{len(ranked)} lights: the {MAX_LIGHTS} brightest at the lit effects light the particles, "
                        f"not {dropped}")
        ranked = ranked[:MAX_LIGHTS]
    casting = [light for light in ranked if light.shadow]
    if len(casting) > MAX_SHADOWED_LIGHTS:
        chosen = ", ".join(light.name for light in casting[:MAX_SHADOWED_LIGHTS])
        warnings.append(f"{len(casting)} lights cast shadows: only the {MAX_SHADOWED_LIGHTS} brightest ({chosen}) "
                        "cast particle shadows, the rest light the particles unshadowed")
    slots = {id(light): slot for slot, light in enumerate(casting[:MAX_SHADOWED_LIGHTS])}
    return tuple(dataclasses.replace(light, shadow_slot=slots.get(id(light), -1)) for light in ranked), warnings


def light_rows(lights) -> np.ndarray:
    """The ``lights`` uniform rows (MAX_LIGHTS x records.LIGHT texels, 4): one records.LIGHT per light."""
    rows = np.zeros((MAX_LIGHTS, LIGHT.texels, 4), np.float32)
    for row, light in zip(rows, lights):
        cos_half = math.cos(light.spot_size / 2)
        row[...] = LIGHT.pack({
            "position": light.position, "kind": light.kind, "direction": light.direction,
            "radius": light.radius, "radiant": light.radiant, "shadow_slot": light.shadow_slot,
            "spot_cos": cos_half, "spot_smooth": (1.0 - cos_half) * light.spot_blend, "half_size": light.half_size,
        })
    return rows.reshape(-1, 4)


def is_lit(settings) -> bool:
    """Whether an effect (its settings, or its Blender properties) is drawn with the light pass: Lit or Both."""
    return settings.lighting != "EMISSION"


def _lit_light(system) -> dict:
    return {PARTICLE_LIGHT.name: system.particle_light}


def _tint(system) -> dict:
    return {PARTICLE_TINT.name: system.tint}


# The look features of every kernel that colors particles through particle_look.glsl (particle_color, or
# particle_shows, lit_radiance): Lit and Both add the light pass's radiance (PARTICLE_LIGHT) to the emission (a Lit
# effect's emission strength is packed as 0: look.particle_values); a spawned effect that inherits its parent's
# color mixes each slot's tint into the color over life (PARTICLE_TINT).
LIT = Feature("lit", defines=(("PARTICLE_LIGHT", "1"),), samplers=(PARTICLE_LIGHT,),
              wants=lambda settings, frame: is_lit(settings), binds=_lit_light, group="look")
TINTED = Feature("tinted", defines=(("PARTICLE_TINT", "1"),), samplers=(PARTICLE_TINT,),
                 wants=lambda settings, frame: inherits_color(settings), binds=_tint, group="look")
LOOK_FEATURES = (LIT, TINTED)
