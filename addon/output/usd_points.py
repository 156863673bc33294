"""USD: a bake's particles as time-sampled ``UsdGeomPoints``, one small file a frame plus one file for the range.

Per frame, ``usd/<frame name>.usdc`` holds the prim ``/Particles`` (Points)
with that frame's ``points``, ``velocities`` (units a second), ``widths``
(twice the radius), ``ids`` and ``primvars:displayColor`` (vertex: linear
color times emission strength), time-sampled at the frame.  ``<name>.usda``
beside the frames is the file to open: it defines ``/Particles`` and plays the
frame files as USD value clips (``UsdClipsAPI``: each frame's file is active
on its frame), so any USD reader (usdview, Houdini, Omniverse, Blender's USD
import) sees one prim whose attributes have a sample on every frame.

Why clips rather than one file or per-frame sublayers: a farm chunk writes
only its own frames' files, each depending on its frame alone, and the
stitched file names every frame of the scene's range, so every chunk writes
the same bytes a whole bake does; sublayers would not do, as USD takes all of
an attribute's time samples from the strongest layer that has any.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from .display import image_modules
from .export import scene_particles
from .frame_writer import StageClock, write_whole

PRIM = "/Particles"
MANIFEST = "manifest.usda"  # in the usd folder: the attributes the clips sample (USD reads it instead of every clip)
# One writer thread in pxr at a time: two threads' first layers deadlocked in USD's plugin loading (measured here).
_PXR_LOCK = threading.Lock()


def pxr_modules():
    """pxr's Sdf, Usd, UsdGeom, Vt: importable as is in Blender, from Blender's own site-packages in the bpy module."""
    try:
        from pxr import Sdf, Usd, UsdGeom, Vt
    except ImportError:
        image_modules()  # puts that folder on the path
        from pxr import Sdf, Usd, UsdGeom, Vt
    return Sdf, Usd, UsdGeom, Vt


def _stage(layer, fps: float, meters_per_unit: float):
    _, Usd, UsdGeom, _ = pxr_modules()
    stage = Usd.Stage.Open(layer)
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, meters_per_unit)
    stage.SetTimeCodesPerSecond(fps)
    stage.SetFramesPerSecond(fps)
    return stage


def write_frame(path: Path, particles: dict | None, frame: int, fps: float, meters_per_unit: float) -> None:
    """One frame's clip file (``particles``: :func:`export.scene_particles`'s, None: no particle)."""
    Sdf, Usd, UsdGeom, Vt = pxr_modules()
    layer = Sdf.Layer.CreateAnonymous(".usdc")
    stage = _stage(layer, fps, meters_per_unit)
    stage.SetStartTimeCode(frame)
    stage.SetEndTimeCode(frame)
    points = UsdGeom.Points.Define(stage, PRIM)
    time = Usd.TimeCode(frame)
    if particles is None:
        particles = {"position": np.zeros((0, 3), np.float32), "velocity": np.zeros((0, 3), np.float32),
                     "radius": np.zeros(0, np.float32), "id": np.zeros(0, np.int64),
                     "color": np.zeros((0, 4), np.float32)}
    points.CreatePointsAttr().Set(Vt.Vec3fArray.FromNumpy(np.ascontiguousarray(particles["position"])), time)
    points.CreateVelocitiesAttr().Set(Vt.Vec3fArray.FromNumpy(np.ascontiguousarray(particles["velocity"])), time)
    points.CreateWidthsAttr().Set(Vt.FloatArray.FromNumpy(2 * particles["radius"]), time)
    points.CreateIdsAttr().Set(Vt.Int64Array.FromNumpy(particles["id"].astype(np.int64)), time)
    color = points.CreateDisplayColorPrimvar(UsdGeom.Tokens.vertex)
    color.Set(Vt.Vec3fArray.FromNumpy(np.ascontiguousarray(particles["color"][:, :3])), time)
    layer.Export(str(path))


def write_top(path: Path, clip_files: list[str], frames: range, fps: float, meters_per_unit: float) -> None:
    """The file to open: ``/Particles`` playing ``clip_files`` (relative to it, one per frame of ``frames``).
    Written as layer data alone (no stage: one would open every clip)."""
    Sdf, _, _, Vt = pxr_modules()
    layer = Sdf.Layer.CreateAnonymous(".usda")
    layer.startTimeCode, layer.endTimeCode = frames[0], frames[-1]
    layer.timeCodesPerSecond = layer.framesPerSecond = fps
    layer.defaultPrim = PRIM.lstrip("/")
    layer.pseudoRoot.SetInfo("upAxis", "Z")
    layer.pseudoRoot.SetInfo("metersPerUnit", meters_per_unit)
    prim = Sdf.PrimSpec(layer, PRIM.lstrip("/"), Sdf.SpecifierDef, "Points")
    _declare(prim)
    folder = Path(clip_files[0]).parent.as_posix()
    prim.SetInfo("clips", {"default": {
        "assetPaths": Sdf.AssetPathArray([Sdf.AssetPath(name) for name in clip_files]),
        "primPath": PRIM,
        "active": Vt.Vec2dArray([(frame, index) for index, frame in enumerate(frames)]),
        "times": Vt.Vec2dArray([(frame, frame) for frame in frames]),
        "manifestAssetPath": Sdf.AssetPath(f"{folder}/{MANIFEST}")}})
    layer.Export(str(path))


def _declare(prim) -> None:
    """The attributes the clips sample, on a prim spec (the top file's with displayColor's interpolation:
    clips give time samples, never metadata)."""
    Sdf, _, _, _ = pxr_modules()
    for name, type_name in (("points", Sdf.ValueTypeNames.Point3fArray), ("velocities", Sdf.ValueTypeNames.Vector3fArray),
                            ("widths", Sdf.ValueTypeNames.FloatArray), ("ids", Sdf.ValueTypeNames.Int64Array),
                            ("primvars:displayColor", Sdf.ValueTypeNames.Color3fArray)):
        attribute = Sdf.AttributeSpec(prim, name, type_name, Sdf.VariabilityVarying)
        if name.startswith("primvars:"):
            attribute.SetInfo("interpolation", "vertex")


def write_manifest(path: Path) -> None:
    """The clips' manifest: every attribute they sample, declared once (USD's own rule for a manifest)."""
    Sdf, _, _, _ = pxr_modules()
    layer = Sdf.Layer.CreateAnonymous(".usda")
    _declare(Sdf.PrimSpec(layer, PRIM.lstrip("/"), Sdf.SpecifierOver))
    layer.Export(str(path))


def capture(renderer, frame: int):
    """The drawn frame's state (export.system_states) with the scene's frame rate and unit scale."""
    from .export import system_states

    scene = renderer.scene
    return (system_states(renderer), frame, scene.render.fps / scene.render.fps_base,
            scene.unit_settings.scale_length)


def write(path: Path, captured) -> None:
    states, frame, fps, meters_per_unit = captured
    particles = scene_particles(states)
    with _PXR_LOCK:
        write_frame(path, particles, frame, fps, meters_per_unit)


def top_file(folder: Path, frame_path: Path) -> Path:
    """The file to open: named as the frames without their number (``particles.usda`` when that is nothing)."""
    stem = frame_path.stem.rstrip("0123456789").rstrip("_.- ")
    return folder / f"{stem or 'particles'}.usda"


def finish(scene, file_of) -> None:
    """The top file and the manifest, naming every frame of the scene's range (whichever a chunk baked);
    ``file_of(frame)``: the frame's file."""
    every = range(scene.frame_start, scene.frame_end + 1, scene.frame_step)
    first = file_of(every[0])
    usd_folder = first.parent
    fps = scene.render.fps / scene.render.fps_base
    clock = StageClock()
    clip_files = [f"{usd_folder.name}/{file_of(frame).name}" for frame in every]
    with _PXR_LOCK:
        write_whole(usd_folder / MANIFEST, write_manifest, clock)
        write_whole(top_file(usd_folder.parent, first),
                    lambda partial: write_top(partial, clip_files, every, fps, scene.unit_settings.scale_length), clock)
