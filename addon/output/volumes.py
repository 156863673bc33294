"""VDB volumes: each baked frame's effects as OpenVDB grids (density, emission, velocity) that Blender's Volume plays.

The grids are made on the GPU (engine/light/volume_grids.py says what each holds); per frame the main thread
``capture``s them (a bounds pass, 6 texels read back, the splat, resolve and pack passes, the active 8^3 leaves
read back), a writer thread ``write``s them with Blender's bundled ``openvdb`` into one ``.vdb`` file: a
FloatGrid ``density`` and Vec3SGrids ``emission`` and ``velocity``, stored as half floats (Blender renders
half-float grids; the files are half the size), only the voxels that hold something active (``copyFromArray``
of each run of leaves along z, a zero background and tolerance: the grids are sparse).  A scene of several effects names each effect's grids after it
(``Smoke.density``); one effect's are plain ``density`` ...  No particle alive: the grids are empty, the file
valid.

OpenVDB writes a random UUID into every file's header; ``write`` replaces it with one made from the file's
other bytes, so the same frame gives the same file on every run and in every farm chunk (byte-identical).
"""

from __future__ import annotations

import hashlib
import weakref
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..engine.light.volume_grids import GRIDS, LEAF, Leaves, Placement, VolumeGrids
from .display import bundled_module

UUID_OFFSET = 21  # the header's UUID: after the magic (8), file version (4), library version (8), offsets flag (1)
UUID_LENGTH = 36
_GRIDS_OF = weakref.WeakKeyDictionary()  # renderer -> a VolumeGrids per system (its GPU images, reused per frame)


def openvdb():
    return bundled_module("openvdb")


@dataclass
class EffectVolume:
    """One effect's grids of a frame as read back: its active ``leaves``, placed by ``placement`` (None: no
    particle alive, empty grids of voxel ``voxel``)."""

    name: str
    leaves: Leaves | None
    placement: Placement | None
    voxel: float


def grid_name(effect: str, grid: str, effects: int) -> str:
    """The name of an effect's grid in a file of ``effects`` effects (Add to Scene's material reads it)."""
    return grid if effects == 1 else f"{effect}.{grid}"


def voxel_size(scene) -> float:
    """The scene's VDB voxel size setting (0: Auto)."""
    return float(scene.gpu_particles_output.volume_voxel_size)


def capture(renderer, frame: int) -> list[EffectVolume]:
    """The drawn frame's grids of every effect, read back (the GPU's part: grids.build)."""
    grids = _GRIDS_OF.setdefault(renderer, {})
    voxel = voxel_size(renderer.scene)
    captured = []
    for index, ((name, _), system) in enumerate(zip(renderer.effects, renderer.simulation.systems)):
        if index not in grids:
            grids[index] = VolumeGrids(renderer.host)
        volume = grids[index]
        captured.append(effect_volume(volume, system, renderer.resources.look_texture(system), name, voxel))
    return captured


def effect_volume(volume: VolumeGrids, system, look, name: str, voxel: float) -> EffectVolume:
    """One system's grids this frame (``voxel`` 0: Auto); refused past the voxel limit (SettingsError)."""
    placement = volume.placement(system, look, voxel)
    if placement is None:
        return EffectVolume(name, None, None, voxel if voxel > 0 else max(float(system.settings.size), 1e-6) / 2)
    volume.build(system, look, placement)
    return EffectVolume(name, volume.read(), placement, placement.voxel)


def vdb_grids(effects: list[EffectVolume]) -> list:
    """openvdb grids of every effect: sparse, half-float, their transform the lattice's."""
    vdb = openvdb()
    grids = []
    for effect in effects:
        index = np.zeros(3, np.int64) if effect.placement is None else np.asarray(effect.placement.index)
        voxel = effect.voxel
        # index (i, j, k) at the world center (ijk + 0.5) x voxel
        transform = vdb.createLinearTransform([[voxel, 0, 0, 0], [0, voxel, 0, 0], [0, 0, voxel, 0],
                                               [voxel / 2, voxel / 2, voxel / 2, 1]])
        for grid, lanes in GRIDS.items():
            made = vdb.FloatGrid() if lanes == 1 else vdb.Vec3SGrid()
            if effect.leaves is not None:
                fill(made, effect.leaves.grids[grid], effect.leaves.origins + index, lanes == 1)
            made.name = grid_name(effect.name, grid, len(effects))
            made.transform = transform
            made.saveFloatAsHalf = True
            made.gridClass = vdb.GridClass.FOG_VOLUME if grid == "density" else vdb.GridClass.UNKNOWN
            grids.append(made)
    return grids


def fill(grid, leaves: np.ndarray, origins: np.ndarray, scalar: bool) -> None:
    """Copy (n, 8, 8, 8[, 3]) leaves at VDB index ``origins`` (sorted by x, y, z) into ``grid``: a call for each
    run of leaves next to each other along z (a call costs more than its voxels)."""
    if not len(origins):
        return
    breaks = np.flatnonzero((origins[1:, :2] != origins[:-1, :2]).any(axis=1)
                            | (origins[1:, 2] != origins[:-1, 2] + LEAF)) + 1
    tolerance = 0.0 if scalar else (0.0, 0.0, 0.0)
    for start, stop in zip((0, *breaks), (*breaks, len(origins))):
        run = leaves[start:stop]  # (leaf, x, y, z[, 3]) to (x, y, leaf z)
        block = np.moveaxis(run, 0, 2).reshape(LEAF, LEAF, LEAF * (stop - start), *run.shape[4:])
        grid.copyFromArray(np.ascontiguousarray(block), ijk=tuple(int(i) for i in origins[start]),
                           tolerance=tolerance)


def write(path: Path, effects: list[EffectVolume]) -> None:
    """The frame's .vdb at ``path`` (the writer's temporary name: the frame writer renames it when whole).
    OpenVDB's own write says nothing when the disk fills (a short file): ``settle_uuid`` checks it is whole."""
    openvdb().write(str(path), vdb_grids(effects))
    settle_uuid(path)


def settle_uuid(path: Path) -> None:
    """Replace the random UUID OpenVDB wrote into the header with one made from the rest of the file, after
    checking the file is whole (OSError: short)."""
    with open(path, "r+b") as file:
        data = bytearray(file.read())
        if data[:4] != b" BDV" or data[UUID_OFFSET + 8:UUID_OFFSET + 9] != b"-":
            raise OSError(f"'{Path(path).name}' is not an OpenVDB file this add-on can stamp")
        if grids_end(data) != len(data):
            raise OSError(f"'{Path(path).name}' was written short ({len(data):,} bytes): is the disk full?")
        data[UUID_OFFSET:UUID_OFFSET + UUID_LENGTH] = bytes(UUID_LENGTH)
        digest = hashlib.sha1(data).hexdigest().upper()
        stamp = "-".join(digest[a:b] for a, b in ((0, 8), (8, 12), (12, 16), (16, 20), (20, 32)))
        file.seek(UUID_OFFSET)
        file.write(stamp.encode("ascii"))


def grids_end(data: bytes) -> int:
    """Where a .vdb's last grid ends by its grid descriptors (each grid's end offset, written with the file),
    -1 where the descriptors themselves are cut off."""
    at = UUID_OFFSET + UUID_LENGTH

    def take(size: int) -> bytes:
        nonlocal at
        if at + size > len(data):
            raise IndexError
        at += size
        return bytes(data[at - size:at])

    def number(size: int = 4) -> int:
        return int.from_bytes(take(size), "little", signed=True)

    try:
        for _ in range(number()):  # file metadata: name, type name, value
            take(number()), take(number()), take(number())
        end = at + 4
        for _ in range(number()):  # grid descriptors: name, type, instance parent, grid / blocks / end offsets
            take(number()), take(number()), take(number())
            number(8), number(8)
            end = number(8)
            at = end
        return end
    except IndexError:
        return -1


def read(path: Path) -> dict[str, object]:
    """The grids of a .vdb file by name (tests and checks)."""
    grids, _ = openvdb().readAll(str(path))
    return {grid.name: grid for grid in grids}
