"""A preset's rocks (its stage's ``rocks``): a few rough meshes in a hidden collection, for Add to Scene to put on
the particles of a point cache (the Debris preset's tumbling rocks)."""

from __future__ import annotations

import bpy
import numpy as np

ROCKS_MARKER = "gpu_particles_instances"  # a custom property on the collection: Add to Scene instances it
MATERIAL_NAME = "GPU Particles Rock"


def stage_rocks(scene):
    """The scene's collection of stage rocks, or None."""
    return next((c for c in scene.collection.children_recursive if c.get(ROCKS_MARKER)), None)


def add_stage_rocks(rocks: dict, offset=(0.0, 0.0, 0.0)) -> list:
    """``{"count": n, "seed": s, "roughness": r}``: n icospheres of unit radius, each vertex pushed in by up to
    r and each rock squashed at random (seeded: the same rocks every time), in a collection hidden from the
    viewport and renders (instances show them), so ``offset`` (where the stage is) moves nothing.  The new objects."""
    scene = bpy.context.scene
    collection = bpy.data.collections.new("Debris Rocks")
    collection[ROCKS_MARKER] = 1
    collection.hide_viewport = collection.hide_render = True
    scene.collection.children.link(collection)
    rng = np.random.default_rng(rocks.get("seed", 0))
    material = _rock_material()
    added = []
    for index in range(rocks.get("count", 3)):
        mesh = _icosphere(f"Rock {index + 1}", rocks.get("subdivisions", 2))
        positions = np.empty(len(mesh.vertices) * 3, np.float32)
        mesh.vertices.foreach_get("co", positions)
        positions = positions.reshape(-1, 3)
        pushed = 1.0 - rocks.get("roughness", 0.3) * rng.random(len(positions))
        squash = rng.uniform(0.55, 1.0, 3)
        mesh.vertices.foreach_set("co", (positions * pushed[:, None] * squash).astype(np.float32).ravel())
        mesh.materials.append(material)
        obj = bpy.data.objects.new(mesh.name, mesh)
        collection.objects.link(obj)
        added.append(obj)
    return added


def _icosphere(name: str, subdivisions: int):
    import bmesh

    mesh = bpy.data.meshes.new(name)
    shape = bmesh.new()
    bmesh.ops.create_icosphere(shape, subdivisions=subdivisions, radius=1.0)
    shape.to_mesh(mesh)
    shape.free()
    return mesh


def _rock_material():
    material = bpy.data.materials.get(MATERIAL_NAME) or bpy.data.materials.new(MATERIAL_NAME)
    shader = material.node_tree.nodes.get("Principled BSDF")
    if shader is not None:
        shader.inputs["Base Color"].default_value = (0.18, 0.15, 0.12, 1.0)
        shader.inputs["Roughness"].default_value = 0.9
    return material
