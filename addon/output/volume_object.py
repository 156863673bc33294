"""Add to Scene's Volume: a Volume object playing a bake's .vdb sequence, with a Principled Volume wired to its grids.

Blender's own features alone (no add-on needed to play it): the Volume datablock's file sequence
(``is_sequence``; ``frame_start`` the bake's first frame, ``frame_offset`` so that frame N plays the file
numbered N), the ``velocity`` grid for motion blur (world units a second), and a material whose Principled
Volume reads the ``density`` grid, takes the ``emission`` grid (radiance a unit length) as its Emission Color
at strength 1, and scatters in the effect's albedo (a Lit effect's) or white.  Cycles and EEVEE render it with
the scene's lights, casting shadows on surfaces and seen in reflections.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import bpy

from .volumes import grid_name

_FRAME_NUMBER = re.compile(r"(\d+)$")
MARKER = "gpu_particles_volumes"  # on the Volume datablocks Add to Scene makes: the panel checks their files


def sequence_frames(folder: Path) -> tuple[Path, list[int]]:
    """The first .vdb of the folder's sequence and the frame numbers its files carry (sorted)."""
    numbered = sorted((int(match.group(1)), path) for path in Path(folder).glob("*.vdb")
                      if not path.name.startswith(".") and (match := _FRAME_NUMBER.search(path.stem)))
    if not numbered:
        raise FileNotFoundError(f"no .vdb frames in '{folder}': bake with Write Volumes first")
    frames = [frame for frame, _ in numbered]
    if len(set(frames)) < len(frames):  # Blender's Volume reads a sequence's frame from the name's last digits
        raise FileNotFoundError(f"the .vdb files in '{folder}' do not end in their frame number ('{numbered[0][1].name}'):"
                                " Blender's Volume cannot play them; bake to a Bake Output whose #s come last")
    return numbered[0][1], frames


def add_volume_object(scene, folder: Path, effect: str, effects: int = 1, settings=None):
    """A Volume object in ``scene`` playing the .vdb frames in ``folder``: the grids of ``effect`` (one of the
    bake's ``effects``), its material's scattering color from ``settings`` (the effect's; None: white)."""
    first, frames = sequence_frames(folder)
    volume = bpy.data.volumes.new(f"{effect} Volume")
    volume[MARKER] = True
    volume.filepath = bpy.path.relpath(str(first)) if bpy.data.filepath else str(first)
    volume.grids.load()  # the velocity grid is named only among grids Blender has read: the first file's
    volume.velocity_grid = grid_name(effect, "velocity", effects)
    volume.velocity_unit = "SECOND"
    volume.is_sequence = True
    volume.frame_start = frames[0]
    volume.frame_duration = frames[-1] - frames[0] + 1
    volume.frame_offset = frames[0] - 1
    volume.sequence_mode = "CLIP"  # no volume outside the baked frames
    volume.materials.append(volume_material(effect, effects, settings))
    obj = bpy.data.objects.new(f"{effect} Volume", volume)
    scene.collection.objects.link(obj)
    return obj


def add_volume_objects(scene, folder: Path, named_settings) -> list:
    """A Volume object for each effect of the bake (``named_settings``: (name, settings) in the bake's order)."""
    return [add_volume_object(scene, folder, name, len(named_settings), settings)
            for name, settings in named_settings]


def missing_volumes(scene) -> list[str]:
    """A line for each of Add to Scene's Volume objects whose file of the current frame is not there (a moved
    or deleted folder: Blender renders no volume; this names the path)."""
    lines = []
    for obj in scene.objects:
        volume = obj.data if obj.type == "VOLUME" else None
        if volume is None or not volume.get(MARKER) or not volume.is_sequence:
            continue
        frame = scene.frame_current - volume.frame_start
        if not 0 <= frame < volume.frame_duration:
            continue  # no volume outside the baked frames (CLIP): nothing is missing
        path = Path(bpy.path.abspath(volume.filepath))
        digits = _FRAME_NUMBER.search(path.stem)
        frame_file = path.with_name(f"{path.stem[:digits.start()]}{frame + 1 + volume.frame_offset:0{len(digits.group(1))}d}"
                                    f"{path.suffix}") if digits else path
        if not frame_file.is_file():
            folder = frame_file.parent
            why = "has no file for this frame" if os.path.isdir(folder) else "is missing (moved or deleted?)"
            lines.append(f"{obj.name}: volume folder '{folder}' {why}")
    return lines


def volume_material(effect: str, effects: int, settings=None):
    """A Principled Volume reading the effect's density grid, emitting its emission grid."""
    material = bpy.data.materials.new(f"{effect} Volume")
    if material.node_tree is None:  # Blender 5.2 makes a node tree with a new material; older ones on request
        material.use_nodes = True
    nodes, links = material.node_tree.nodes, material.node_tree.links
    nodes.clear()
    shader = nodes.new("ShaderNodeVolumePrincipled")
    shader.inputs["Density"].default_value = 1.0  # the grid holds the extinction a unit length
    shader.inputs["Density Attribute"].default_value = grid_name(effect, "density", effects)
    lit = settings is not None and settings.lighting != "EMISSION"
    albedo = tuple(settings.albedo) if lit else (1.0, 1.0, 1.0)
    shader.inputs["Color"].default_value = (*albedo, 1.0)
    emission = nodes.new("ShaderNodeAttribute")
    emission.attribute_type = "GEOMETRY"
    emission.attribute_name = grid_name(effect, "emission", effects)
    emission.location = (-300, -200)
    links.new(emission.outputs["Color"], shader.inputs["Emission Color"])
    shader.inputs["Emission Strength"].default_value = 1.0
    output = nodes.new("ShaderNodeOutputMaterial")
    output.location = (300, 0)
    links.new(shader.outputs["Volume"], output.inputs["Volume"])
    return material
