"""A preset's force fields (its stage's ``fields``) as Blender effector objects.

The command line's scene and the panel's Add both build them, so a preset whose look comes from
its fields (the galaxy's vortex) looks the same wherever it is added.
"""

from __future__ import annotations

import bpy


def scene_has_fields(scene) -> bool:
    return any(obj.field is not None and obj.field.type != "NONE" for obj in scene.objects)


def add_stage_fields(fields, offset=(0.0, 0.0, 0.0)) -> list:
    """Blender force fields as the stage places them, shifted by ``offset``:
    ``{"type": "VORTEX", "strength": s, "falloff_power": p, "location": [x, y, z]}`` each; the new objects."""
    added = []
    for field in fields:
        location = [a + b for a, b in zip(field.get("location", (0.0, 0.0, 0.0)), offset)]
        bpy.ops.object.effector_add(type=field["type"], location=location)
        settings = bpy.context.object.field
        settings.strength = field.get("strength", 1.0)
        settings.falloff_type = "SPHERE"
        settings.falloff_power = field.get("falloff_power", 0.0)
        added.append(bpy.context.object)
    return added
