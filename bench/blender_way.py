"""The peer of the end-to-end suite: the same shot done Blender's own way.

A legacy particle system on an icosphere emitter of the preset's radius and
place, with the preset's count, lifetime, velocity, gravity and drag,
rendered by EEVEE (one sample) as instanced low-poly spheres (render as
Object: an icosphere of subdivision 1 at the preset's particle size), each
frame written as a PNG.  ``blender_way_ms`` times frame_set (Blender
simulates) and render + write separately, after the preroll and one warm-up
frame.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import bpy

from addon.cli import build_scene


def eevee_engine(scene) -> str:
    """EEVEE's identifier in this Blender ('BLENDER_EEVEE_NEXT' in 4.2-4.4, 'BLENDER_EEVEE' since 5.0)."""
    engines = [item.identifier for item in scene.render.bl_rna.properties["engine"].enum_items]
    return next(e for e in ("BLENDER_EEVEE_NEXT", "BLENDER_EEVEE") if e in engines)


def glow_material(effect):
    """An emission shader in the preset's start colour (the scene has no lights: our particles glow too)."""
    material = bpy.data.materials.new("Particle")
    material.use_nodes = True
    nodes = material.node_tree.nodes
    nodes.clear()
    emission = nodes.new("ShaderNodeEmission")
    emission.inputs["Color"].default_value = (*effect.color_start, 1.0)
    emission.inputs["Strength"].default_value = effect.emission_strength
    output = nodes.new("ShaderNodeOutputMaterial")
    material.node_tree.links.new(emission.outputs["Emission"], output.inputs["Surface"])
    return material


def particle_scene(preset, count: int, width: int, height: int, frames: int, out_dir: Path):
    """The preset's stage (camera, emitter place) with Blender's particle system standing in for ours."""
    effect = preset.effect
    scene, empty = build_scene(preset, (1, frames + 1), (width, height), out_dir)
    fps = scene.render.fps / scene.render.fps_base
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=1, radius=1.0, location=(0.0, 0.0, -1000.0))
    sphere = bpy.context.active_object  # the instanced shape; out of view (instances ignore its location)
    sphere.data.materials.append(glow_material(effect))
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=2, radius=effect.emitter_radius, location=empty.location)
    emitter = bpy.context.active_object
    emitter.show_instancer_for_render = False
    if empty.animation_data is not None:  # the preset's orbit
        emitter.animation_data_create().action = empty.animation_data.action
    emitter.modifiers.new("Particles", "PARTICLE_SYSTEM")
    particles = emitter.particle_systems[0].settings
    preroll = round(effect.preroll * fps)
    particles.count = count
    particles.frame_start = 1 - preroll
    particles.frame_end = frames + 1
    particles.lifetime = effect.lifetime * fps
    particles.lifetime_random = effect.lifetime_random
    particles.emit_from = "VOLUME"
    particles.distribution = "RAND"
    particles.normal_factor = 0.0
    particles.object_align_factor = tuple(effect.velocity)
    particles.factor_random = effect.velocity_random
    particles.object_factor = effect.inherit_velocity
    particles.physics_type = "NEWTON"
    particles.drag_factor = min(effect.drag, 1.0)
    particles.render_type = "OBJECT"
    particles.instance_object = sphere
    particles.particle_size = effect.size
    particles.size_random = 0.0
    scene.gravity = tuple(effect.gravity)
    scene.render.engine = eevee_engine(scene)
    scene.eevee.taa_render_samples = 1
    return scene, preroll


def blender_way_ms(preset, count: int, width: int, height: int, frames: int, out_dir: Path) -> dict:
    """Per finished frame on disk: Blender simulating (frame_set) and EEVEE rendering + writing the PNG."""
    scene, preroll = particle_scene(preset, count, width, height, frames, out_dir)
    for frame in range(1 - preroll, 1):  # the preroll, stepped as Blender's particles need
        scene.frame_set(frame)
    simulate, render = [], []
    for frame in range(1, frames + 2):  # frame 1 warms up (shader compilation)
        start = time.perf_counter()
        scene.frame_set(frame)
        simulated = time.perf_counter()
        scene.render.filepath = str(out_dir / f"blender_{frame:04d}.png")
        bpy.ops.render.render(write_still=True)
        if frame > 1:
            simulate.append((simulated - start) * 1e3)
            render.append((time.perf_counter() - simulated) * 1e3)
    return {"peer_ms_per_frame": statistics.fmean(s + r for s, r in zip(simulate, render)),
            "peer_simulate_ms": statistics.fmean(simulate), "peer_render_ms": statistics.fmean(render)}
