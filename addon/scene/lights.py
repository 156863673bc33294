"""The scene's lights and World as lit particles see them (engine/look/lighting.py has the radiometry).

Read every drawn frame (lights animate): each light object that renders (``hide_render`` off) with its
world matrix (a light shines along its local -Z), Blender's power (``energy``: watts, a sun's W/m^2) times
``2^exposure`` and its volume factor (the particles are a volume), its color (times the blackbody color when
it uses a temperature).  Not modelled: a light's node tree, ``normalize`` off, custom distance, a spot's
non-round (scaled) cone, area lights' spread.

The ambient term is the World's radiance: the color (times strength) of the Background node the World Output
takes, or the World's color when it has no such node; an environment texture or sky feeding that Background
is not sampled (its World color stands in, with a warning).
"""

from __future__ import annotations

import math

import numpy as np

from ..engine.look.lighting import MAX_POWER, Light, SceneLights, assign_shadow_slots


def is_light(obj) -> bool:
    return obj.type == "LIGHT"


def scene_lights(scene, at, objects=None) -> SceneLights:
    """The lights of ``scene`` now, brightest at ``at`` (a world point) first with shadow slots assigned
    (lighting.assign_shadow_slots), its World's ambient and warnings; ``objects``: the scene's, or those of them
    that may be lights."""
    lights, warnings = [], []
    for obj in (scene.objects if objects is None else objects):
        if is_light(obj) and not obj.hide_render:
            light, problem = read_light(obj)
            if light is not None:
                lights.append(light)
            if problem:
                warnings.append(problem)
    ranked, slot_warnings = assign_shadow_slots(lights, at)
    ambient, ambient_warning = world_ambient(scene.world)
    return SceneLights(ranked, ambient, tuple(warnings + slot_warnings + ([ambient_warning] if ambient_warning else [])))


def read_light(obj) -> tuple[Light | None, str | None]:
    """The light of a light object, or None with why it lights nothing (zero, negative or non-finite power, a
    collapsed matrix); a huge power is clamped to lighting.MAX_POWER with a warning."""
    data = obj.data
    color = np.array(data.color, np.float64)
    if data.use_temperature:
        color = color * np.array(data.temperature_color, np.float64)
    power = float(data.energy) * 2.0 ** float(data.exposure) * float(data.volume_factor)
    name = f"light '{obj.name}'"
    if not (math.isfinite(power) and np.isfinite(color).all()):
        return None, f"{name}: its power or color is not a number, it lights no particles"
    if power <= 0.0 or not color.any():
        return None, f"{name} has {'no' if power == 0.0 or not color.any() else 'negative'} power: it lights no particles"
    warning = None
    if power > MAX_POWER:
        # the same words whatever the frame's power: a bake lists each warning once
        warning = f"{name}: its power is above {MAX_POWER:g} and clamped to it for the particles"
        power = MAX_POWER
    matrix = np.array(obj.matrix_world, np.float64)
    direction = -matrix[:3, 2]
    length = float(np.linalg.norm(direction))
    if not length > 0.0:
        return None, f"{name} is scaled to nothing: it lights no particles"
    area = data.type == "AREA"
    scale = np.linalg.norm(matrix[:3, :2], axis=0) if area else (1.0, 1.0)
    size_x = float(data.size * scale[0]) if area else 0.0
    size_y = float((data.size_y if data.shape in ("RECTANGLE", "ELLIPSE") else data.size) * scale[1]) if area else 0.0
    return Light(
        data.type, tuple(color.tolist()), power, tuple(matrix[:3, 3].tolist()), tuple((direction / length).tolist()),
        spot_size=float(getattr(data, "spot_size", math.pi / 4)), spot_blend=float(getattr(data, "spot_blend", 0.0)),
        area_shape=data.shape if area else "SQUARE", size_x=size_x, size_y=size_y,
        radius=float(data.shadow_soft_size) if data.type in ("POINT", "SPOT") else 0.0,
        shadow=bool(data.use_shadow), name=obj.name,
    ), warning


def world_ambient(world) -> tuple[tuple[float, float, float], str | None]:
    """The World's radiance (the ambient term), and a warning when the World is more than one color."""
    if world is None:
        return (0.0, 0.0, 0.0), None
    fallback = tuple(float(c) for c in world.color)
    tree = world.node_tree
    output = next((n for n in tree.nodes if n.bl_idname == "ShaderNodeOutputWorld" and n.is_active_output), None) \
        if tree is not None else None
    surface = output.inputs["Surface"] if output is not None else None
    if surface is None or not surface.is_linked:
        return fallback, None
    node = surface.links[0].from_node
    if node.bl_idname != "ShaderNodeBackground" or node.inputs["Color"].is_linked or node.inputs["Strength"].is_linked:
        return fallback, (f"World '{world.name}': its background is not one color, the particles' ambient light is "
                          "its viewport color")
    strength = float(node.inputs["Strength"].default_value)
    return tuple(float(c) * strength for c in node.inputs["Color"].default_value[:3]), None
