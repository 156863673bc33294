"""Files a bake writes beside its frames besides the images: point caches, volumes, USD.

Each kind is an :class:`ExtraOutput`: a scene output setting turns it on
(``Scene.gpu_particles_output.write_points`` ...), its files go into a folder
of their own beside the frames, named as the frames are (``frames/points/frame_0001.ply``
beside ``frames/frame_0001.png``).  Per frame the main thread ``capture``s
what the file needs from the renderer (GPU readbacks) right after the frame
is drawn; a writer thread ``write``s it to a hidden temporary name, renamed
when complete (frame_writer.py), so a file appears only whole.  ``finish``
runs once after the last frame (a file naming the whole sequence).  Every
file depends only on its frame and the scene, so a chunked farm bake writes
the files a whole one does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import point_cache, usd_points, volumes


@dataclass(frozen=True)
class ExtraOutput:
    """One kind of file a bake writes per frame beside its images."""

    setting: str  # the Scene.gpu_particles_output property that turns it on
    folder: str  # beside the frames
    suffix: str
    capture: Callable  # (renderer, frame) -> what write needs; on the main thread, after the frame is drawn
    write: Callable  # (path, captured) -> None: writes the whole file at path; on a writer thread
    finish: Callable | None = None  # (scene, file_of: frame -> Path) -> None, after the last frame, if any was written
    label: str = ""  # as messages name it
    requires: Callable | None = None  # () -> None, raising ImportError where this Blender lacks a module it needs


def extra_path(frame_path: Path, extra: ExtraOutput) -> Path:
    """The file of ``extra`` for the frame written at ``frame_path``: its folder beside the frames, the frame's name."""
    return frame_path.parent / extra.folder / (frame_path.stem + extra.suffix)


POINTS = ExtraOutput("write_points", "points", ".ply", point_cache.capture, point_cache.write, label="point cache")
VOLUMES = ExtraOutput("write_volumes", "volumes", ".vdb", volumes.capture, volumes.write, label="volumes")
USD = ExtraOutput("write_usd", "usd", ".usdc", usd_points.capture, usd_points.write, usd_points.finish, label="USD",
                  requires=usd_points.pxr_modules)
EXTRAS: tuple[ExtraOutput, ...] = (POINTS, VOLUMES, USD)  # every kind a bake can write


def enabled_extras(scene) -> tuple[ExtraOutput, ...]:
    """The kinds the scene's output settings turn on."""
    output = scene.gpu_particles_output
    return tuple(extra for extra in EXTRAS if getattr(output, extra.setting))
