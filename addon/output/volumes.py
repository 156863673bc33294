"""VDB volumes: each baked frame's effects as OpenVDB grids (density, emission, velocity) that Blender's Volume plays.

The grids are made on the GPU (engine/light/volume_grids.py says what each holds); per frame the main thread
``capture``s them (a bounds pass, 6 texels read back, the splat, resolve and leaf passes, then the leaves' records
and buffers read back as the file stores them: the GPU made the active voxels' halves, masks and the tree's
order), a writer thread ``write``s them into one ``.vdb`` file (vdb_file.py: the header and topology by numpy,
then the read-back buffers; ~100x faster than filling the bundled ``openvdb`` module's grids leaf run by leaf
run): a float grid ``density`` and vec3s
grids ``emission`` and ``velocity``, stored as half floats (Blender renders half-float grids; the files are half
the size), only the voxels that hold something active (a zero background: the grids are sparse).  A scene of
several effects names each effect's grids after it (``Smoke.density``); one effect's are plain ``density`` ...
No particle alive: the grids are empty, the file valid.  The header's UUID is made from the file's other bytes,
so the same frame gives the same file on every run and in every farm chunk (byte-identical).  ``openvdb`` reads
the files back (``read``: tests and checks).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from pathlib import Path

from ..engine.light.volume_grids import GRIDS, NO_LEAVES, Leaves, Placement, VolumeGrids
from . import vdb_file
from .display import bundled_module

_GRIDS_OF = weakref.WeakKeyDictionary()  # renderer -> a VolumeGrids per system (its GPU images, reused per frame)


def openvdb():
    return bundled_module("openvdb")


@dataclass
class EffectVolume:
    """One effect's grids of a frame as read back: its ``leaves`` as the file stores them, placed by ``placement``
    (None: no particle alive, empty grids of voxel ``voxel``)."""

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
    effects = []
    for index, ((name, _), system) in enumerate(zip(renderer.effects, renderer.simulation.systems)):
        if index not in grids:
            grids[index] = VolumeGrids(renderer.host)
        effects.append((name, grids[index], system, renderer.resources.look_texture(system)))
    return effect_volumes(effects, voxel_size(renderer.scene))


def effect_volume(volume: VolumeGrids, system, look, name: str, voxel: float) -> EffectVolume:
    """One system's grids this frame (``voxel`` 0: Auto); refused past the voxel limit (SettingsError)."""
    return effect_volumes([(name, volume, system, look)], voxel)[0]


def effect_volumes(effects: list[tuple], voxel: float) -> list[EffectVolume]:
    """Each (name, VolumeGrids, system, look)'s grids this frame (``voxel`` 0: Auto); refused past the voxel limit
    (SettingsError).  Every bounds pass, then every grid's passes, then the reads: the GPU waited for twice a
    frame (the first read after each: the others find it idle), not twice an effect."""
    for _, volume, system, look in effects:
        volume.queue_bounds(system, look)
    placements = [volume.place(volume.read_bounds(), system, voxel) for _, volume, system, _ in effects]
    for (_, volume, system, look), placement in zip(effects, placements):
        if placement is not None:
            volume.build(system, look, placement)
    return [EffectVolume(name, None, None, voxel if voxel > 0 else max(float(system.settings.size), 1e-6) / 2)
            if placement is None else EffectVolume(name, volume.read(), placement, placement.voxel)
            for (name, volume, system, _), placement in zip(effects, placements)]


def file_grids(effects: list[EffectVolume]) -> list[vdb_file.TreeGrid]:
    """Every effect's grids as the file holds them: the GPU's leaves in the tree's order and their buffers, the
    lattice's voxel."""
    grids = []
    for effect in effects:
        for grid, lanes in GRIDS.items():
            lanes = min(lanes, 3)  # velocity's weight lane stays on the GPU
            leaves = NO_LEAVES if effect.leaves is None else effect.leaves.grids[grid]  # None: nothing alive
            grids.append(vdb_file.TreeGrid(grid_name(effect.name, grid, len(effects)), leaves.origins, leaves.masks,
                                           leaves.counts, leaves.buffers, leaves.bounds, effect.voxel, lanes,
                                           "fog volume" if grid == "density" else "unknown"))
    return grids


def encode(effects: list[EffectVolume]) -> list:
    """The frame's .vdb file as parts to write (vdb_file.encode)."""
    return vdb_file.encode(file_grids(effects))


def write(path: Path, effects: list[EffectVolume]) -> None:
    """The frame's .vdb at ``path`` (the writer's temporary name: the frame writer renames it when whole; a full
    disk raises OSError); the leaves' memory given back once written (the parts hold their buffers, not copies:
    given back before, a later frame read into them while this one wrote them)."""
    try:
        vdb_file.write(path, encode(effects))
    finally:
        for effect in effects:
            if effect.leaves is not None:
                effect.leaves.give_back()


def read(path: Path) -> dict[str, object]:
    """The grids of a .vdb file by name (tests and checks)."""
    grids, _ = openvdb().readAll(str(path))
    return {grid.name: grid for grid in grids}
