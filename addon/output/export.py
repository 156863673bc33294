"""The scene's particles as Blender PointCloud objects, so Cycles and EEVEE render them.

Points carry ``position`` (world space), ``radius`` (the effect's size over
life), a ``Color`` attribute (the color over life times emission strength,
linear HDR, as the splat computes it), ``velocity`` and ``id``; a shared
material emits that color.  The point caches (point_cache.py) write the same
attributes per baked frame.
"""

from __future__ import annotations

import bpy
import numpy as np

from ..engine.look.look import look_table, particle_look
from ..engine.look.point_records import slot_draws
from ..engine.seam.records import PARTICLE
from ..scene.renderer import SceneRenderer

MATERIAL_NAME = "GPU Particles Emission"
COLOR_ATTRIBUTE = "Color"  # Cycles ignores a point attribute named lowercase "color"
CACHE_COLLECTION = "GPU Particles Cache"


def live_slots(system) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pos_age, vel_life, the indices of the live slots) of one system's state."""
    pos_age, vel_life = system.read_state()
    return pos_age, vel_life, live_index(pos_age, vel_life)


def live_index(pos_age, vel_life) -> np.ndarray:
    """The indices of the live slots of a state (born, not dead, finite)."""
    particle = PARTICLE.read_images(pos_age, vel_life)
    with np.errstate(invalid="ignore"):
        age, life = particle["age"], particle["life"]
        live = (age >= 0) & (age < life) & np.isfinite(particle["position"]).all(axis=1)
    return np.flatnonzero(live)


def live_particles(system, first_id: int = 0) -> dict[str, np.ndarray]:
    """:func:`particle_attributes` of one system's state, read now."""
    pos_age, vel_life = system.read_state()
    return particle_attributes(pos_age, vel_life, system.settings, system.ramp, first_id)


def particle_attributes(pos_age, vel_life, settings, ramp=None, first_id: int = 0) -> dict[str, np.ndarray]:
    """The live particles of a state (``system.read_state()``) by attribute: ``position`` (n, 3) world space,
    ``velocity`` (n, 3) units a second, ``radius`` (n,), ``color`` (n, 4) RGBA, ``age`` (n,) seconds, ``id`` (n,)
    the slot plus ``first_id`` (unique across systems), ``rotation`` (n, 3) axis times angle.

    Color and radius follow the splat's look (color ramp or start to end, size
    over life, per-particle randomness), computed as look.glsl does (engine/look/look.py);
    the color is not scaled by pixel coverage (the renderer sees the radius).
    The rotation is the textured sprite's angle (its rotation and spin settings,
    sprite_pose.glsl) about an axis each particle draws at random, so instances tumble.
    """
    index = live_index(pos_age, vel_life)
    particle = PARTICLE.read_images(pos_age, vel_life)
    age, life = particle["age"][index], particle["life"][index]
    slot = slot_draws(settings, len(pos_age))
    look = particle_look(look_table(settings, ramp), age / life, particle["velocity"][index], settings)
    colors = np.ones((len(index), 4), np.float32)
    np.multiply(look[:, :3], slot["brightness"][index, None], out=colors[:, :3])
    angle = slot["birth"][index] + slot["spin"][index] * age  # sprite_angle without the screen's alignment
    return {"position": particle["position"][index], "velocity": particle["velocity"][index],
            "radius": slot["size"][index] * look[:, 3], "color": colors, "age": age,
            "id": index.astype(np.int64) + first_id, "rotation": slot["axis"][index] * angle[:, None]}


def live_points(system) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(positions (n, 3), radii (n,), RGBA colors (n, 4)) of one system's live particles (:func:`live_particles`)."""
    particles = live_particles(system)
    return particles["position"], particles["radius"], particles["color"]


def emission_material():
    """One material that emits each point's color attribute (made once, reused)."""
    material = bpy.data.materials.get(MATERIAL_NAME)
    if material is not None:
        return material
    material = bpy.data.materials.new(MATERIAL_NAME)
    nodes, links = material.node_tree.nodes, material.node_tree.links
    nodes.clear()
    attribute = nodes.new("ShaderNodeAttribute")
    attribute.attribute_name = COLOR_ATTRIBUTE
    emission = nodes.new("ShaderNodeEmission")
    output = nodes.new("ShaderNodeOutputMaterial")
    links.new(attribute.outputs["Color"], emission.inputs["Color"])
    links.new(emission.outputs["Emission"], output.inputs["Surface"])
    return material


def pointcloud_object(name: str, points, collection, velocity=None, ids=None):
    """A new PointCloud object holding ``points`` (what :func:`live_points` returns, concatenated), with
    ``velocity`` (units a second: Cycles' motion blur of points) and ``id`` attributes when given."""
    positions, radii, colors = points
    cloud = bpy.data.pointclouds.new(name)
    cloud.resize(len(positions))
    cloud.attributes["position"].data.foreach_set("vector", np.ascontiguousarray(positions, np.float32).ravel())
    cloud.attributes.new("radius", "FLOAT", "POINT").data.foreach_set("value", radii)
    cloud.attributes.new(COLOR_ATTRIBUTE, "FLOAT_COLOR", "POINT").data.foreach_set("color", colors.ravel())
    if velocity is not None:
        cloud.attributes.new("velocity", "FLOAT_VECTOR", "POINT").data.foreach_set(
            "vector", np.ascontiguousarray(velocity, np.float32).ravel())
    if ids is not None:
        cloud.attributes.new("id", "INT", "POINT").data.foreach_set("value", np.asarray(ids, np.int32))
    cloud.materials.append(emission_material())
    obj = bpy.data.objects.new(name, cloud)
    collection.objects.link(obj)
    return obj


def system_states(renderer) -> list:
    """Every system's state now (a GPU readback), with what :func:`particle_attributes` needs besides:
    its settings, a copy of its ramp and its first id (the slots of the systems before it)."""
    states, first_id = [], 0
    for system in renderer.simulation.systems:
        pos_age, vel_life = system.read_state()
        ramp = None if system.ramp is None else np.array(system.ramp)
        states.append((pos_age, vel_life, system.settings, ramp, first_id))
        first_id += system.count
    return states


def scene_particles(states: list) -> dict[str, np.ndarray] | None:
    """The live particles of :func:`system_states`, concatenated attribute by attribute (None: no system)."""
    parts = [particle_attributes(*state) for state in states]
    return {name: np.concatenate([part[name] for part in parts]) for name in parts[0]} if parts else None


def _cloud(name: str, renderer, collection):
    particles = scene_particles(system_states(renderer))
    return pointcloud_object(name, (particles["position"], particles["radius"], particles["color"]), collection,
                             particles["velocity"], particles["id"])


def export_frame(scene, name: str = "GPU Particles"):
    """The current frame's particles of every enabled effect as one PointCloud object."""
    frame = scene.frame_current
    renderer = SceneRenderer(scene, 1, 1)
    renderer.advance_to(frame)
    renderer.update_ramps()
    return _cloud(f"{name} {frame:04d}", renderer, scene.collection)


def export_range(scene, name: str = "GPU Particles"):
    """One PointCloud object per frame of the scene's range, each visible only on its own frame."""
    collection = bpy.data.collections.new(CACHE_COLLECTION)
    scene.collection.children.link(collection)
    renderer = SceneRenderer(scene, 1, 1)
    current = scene.frame_current
    objects = []
    for frame in range(scene.frame_start, scene.frame_end + 1, scene.frame_step):
        renderer.advance_to(frame)
        renderer.update_ramps()
        obj = _cloud(f"{name} {frame:04d}", renderer, collection)
        for shown, at in ((False, frame - 1), (True, frame), (False, frame + 1)):
            obj.hide_render = obj.hide_viewport = not shown
            obj.keyframe_insert("hide_render", frame=at)
            obj.keyframe_insert("hide_viewport", frame=at)
        objects.append(obj)
    scene.frame_set(current)
    return objects
