"""A preset's colliders (its stage's ``colliders``) as Blender meshes with Collision physics.

The command line's scene and the panel's Add both build them, so a preset whose look comes from what
the particles land on (sand piling on the monkey) looks the same wherever it is added.
"""

from __future__ import annotations

import bpy

from .inputs import has_collision


def scene_has_colliders(scene) -> bool:
    return any(has_collision(obj) for obj in scene.objects)


def add_stage_colliders(colliders, offset=(0.0, 0.0, 0.0)) -> list:
    """Blender primitives with Collision physics as the stage places them, shifted by ``offset``:
    ``{"primitive": "monkey", "options": {"size": 2.0}, "location": [x, y, z], "rotation": [rx, ry, rz],
    "subdivisions": 2, "smooth": true, "damping": d, "friction": f, "thickness": t, "resolution": r}`` each
    (``primitive``: a ``bpy.ops.mesh.primitive_<name>_add``, ``options`` its own); the new objects."""
    added = []
    for collider in colliders:
        location = [a + b for a, b in zip(collider.get("location", (0.0, 0.0, 0.0)), offset)]
        add_primitive = getattr(bpy.ops.mesh, f"primitive_{collider['primitive']}_add")
        add_primitive(location=location, rotation=collider.get("rotation", (0.0, 0.0, 0.0)),
                      **collider.get("options", {}))
        obj = bpy.context.object
        if collider.get("subdivisions"):
            subdivision = obj.modifiers.new("Subdivision", "SUBSURF")
            subdivision.levels = subdivision.render_levels = collider["subdivisions"]
        if collider.get("smooth"):
            obj.data.shade_smooth()
        obj.modifiers.new("Collision", "COLLISION")
        settings = obj.collision
        settings.damping_factor = collider.get("damping", 0.5)
        settings.friction_factor = collider.get("friction", 0.0)
        settings.thickness_outer = collider.get("thickness", 0.02)
        obj.gpu_particles_collider.resolution = collider.get("resolution", 0)
        added.append(obj)
    return added
