"""A lit preset's light (its stage's ``lights``, ``world`` and ``occluders``) as Blender objects.

Lit effects take their light from the scene (Blender's lights, the World color as the ambient term, meshes
that shadow them), so a lit preset carries the lights its look was tuned under; the command line's scene
and the panel's Add both build them, as they build the stage's force fields (``stage_fields.py``).
"""

from __future__ import annotations

import bpy
from mathutils import Vector

OCCLUDER_PROPERTY = "gpu_particles_occluder"  # marks the meshes a preset added, so a second Add adds none


def scene_has_lights(scene) -> bool:
    return any(obj.type == "LIGHT" for obj in scene.objects)


def scene_has_occluders(scene) -> bool:
    return any(obj.get(OCCLUDER_PROPERTY) for obj in scene.objects)


def _shifted(point, offset) -> Vector:
    return Vector(point) + Vector(offset)


def add_stage_lights(lights, offset=(0.0, 0.0, 0.0), scene=None) -> list:
    """Blender lights as the stage places them, shifted by ``offset``; the new objects. Each light:
    ``{"type": "SUN"|"POINT"|"SPOT"|"AREA", "name", "color": [r, g, b], "power": watts (a sun's strength in
    W/m^2), "location": [x, y, z], "target": [x, y, z] (where it shines), "radius" (point/spot/sun angle in
    radians), "spot_size", "spot_blend", "shape", "size", "size_y" (area), "shadow": bool, "power_keys":
    [[frame, power], ...] (an animated power, e.g. a fireball's flash)}``."""
    scene = scene or bpy.context.scene
    added = []
    for light in lights:
        kind = light.get("type", "POINT")
        data = bpy.data.lights.new(light.get("name", kind.title()), kind)
        data.color = light.get("color", (1.0, 1.0, 1.0))
        data.energy = light.get("power", 1000.0 if kind != "SUN" else 3.0)
        data.use_shadow = light.get("shadow", True)
        _shape_light(data, light)
        obj = bpy.data.objects.new(data.name, data)
        obj.location = _shifted(light.get("location", (0.0, 0.0, 5.0)), offset)
        target = _shifted(light.get("target", (0.0, 0.0, 0.0)), offset)
        obj.rotation_euler = (target - obj.location).to_track_quat("-Z", "Y").to_euler()  # lights shine along -Z
        for frame, power in light.get("power_keys", ()):
            data.energy = power
            data.keyframe_insert("energy", frame=frame)
        scene.collection.objects.link(obj)
        added.append(obj)
    return added


def _shape_light(data, light: dict) -> None:
    """The shape settings of one light kind (a sun's angle, a spot's cone, an area's rectangle or disc)."""
    if data.type == "SUN":
        data.angle = light.get("radius", data.angle)
        return
    if data.type == "AREA":
        data.shape = light.get("shape", "SQUARE")
        data.size = light.get("size", 1.0)
        data.size_y = light.get("size_y", data.size)
        return
    data.shadow_soft_size = light.get("radius", data.shadow_soft_size)
    if data.type == "SPOT":
        data.spot_size = light.get("spot_size", data.spot_size)
        data.spot_blend = light.get("spot_blend", data.spot_blend)


def set_stage_world(world: dict, scene=None) -> None:
    """The World color the stage asks for (``{"color": [r, g, b]}``): the lit particles' ambient light."""
    scene = scene or bpy.context.scene
    if scene.world is None:
        scene.world = bpy.data.worlds.new("World")
    color = tuple(world.get("color", (0.05, 0.05, 0.05)))
    scene.world.color = color
    background = next((n for n in scene.world.node_tree.nodes if n.bl_idname == "ShaderNodeBackground"), None)
    if background is not None:  # what EEVEE and Cycles draw; world.color is the one without nodes
        background.inputs["Color"].default_value = (*color, 1.0)
        background.inputs["Strength"].default_value = 1.0


def add_stage_occluders(occluders, offset=(0.0, 0.0, 0.0), scene=None) -> list:
    """Opaque boxes that shadow the particles (a wall with a gap, a window frame), shifted by ``offset``;
    the new objects. Each: ``{"name", "location": [x, y, z], "size": [x, y, z], "rotation": [x, y, z]}``."""
    import bmesh

    scene = scene or bpy.context.scene
    added = []
    for index, occluder in enumerate(occluders):
        mesh = bpy.data.meshes.new(occluder.get("name", f"Occluder {index + 1}"))
        shape = bmesh.new()
        bmesh.ops.create_cube(shape, size=1.0)
        shape.to_mesh(mesh)
        shape.free()
        obj = bpy.data.objects.new(mesh.name, mesh)
        obj.location = _shifted(occluder.get("location", (0.0, 0.0, 0.0)), offset)
        obj.scale = occluder.get("size", (1.0, 1.0, 1.0))
        obj.rotation_euler = occluder.get("rotation", (0.0, 0.0, 0.0))
        obj[OCCLUDER_PROPERTY] = True
        scene.collection.objects.link(obj)
        added.append(obj)
    return added


def add_stage_light_setup(stage: dict, offset=(0.0, 0.0, 0.0), scene=None) -> list:
    """The stage's lights, World color and occluders where the scene has none of them yet; the new objects.

    A scene that already has lights keeps them (and its World): the artist's lighting wins."""
    scene = scene or bpy.context.scene
    added = []
    if stage.get("lights") and not scene_has_lights(scene):
        added += add_stage_lights(stage["lights"], offset, scene)
        if "world" in stage:
            set_stage_world(stage["world"], scene)
    if stage.get("occluders") and not scene_has_occluders(scene):
        added += add_stage_occluders(stage["occluders"], offset, scene)
    return added
