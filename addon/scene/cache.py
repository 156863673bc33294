"""The simulation cache on disk: every effect's full state every K frames, next to the .blend.

Like Blender's own bake caches: Bake Simulation fills it, Free empties it,
and a reopened file scrubs anywhere from it without simulating from the
start.  ``manifest.json`` names the add-on version, the GPU vendor (results
differ between vendors), the simulation start, the effects (each with its settings
key, which the panel compares to tell a cache an edit made stale) and, per checkpoint frame, each effect's
history key (``time.SceneSimulation.history_keys``: settings, emitter
and collider motion, collider meshes and settings, force fields).  A checkpoint is used only when the keys
the scene gives now match, so an edit invalidates the frames from the one it
changes on; a cache of another version, vendor or format, or a damaged file,
raises :class:`CacheError` with the reason.  Every file is written under a
temporary name and renamed when complete, the manifest last.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import numpy as np

from ..engine.simulate import cache_format
from ..engine.simulate.cache_format import CacheError
from ..engine.simulate.simulation import SystemState

MANIFEST = "manifest.json"
DEFAULT_FOLDER = "//gpu_particles_cache/"


def addon_version() -> str:
    manifest = Path(__file__).resolve().parent / "blender_manifest.toml"
    if not manifest.is_file():
        manifest = manifest.parent.parent / "blender_manifest.toml"
    for line in manifest.read_text().splitlines() if manifest.is_file() else ():
        if line.startswith("version"):
            return line.split("=", 1)[1].strip().strip('"')
    return "unknown"


def gpu_vendor() -> str:
    import gpu

    return gpu.platform.vendor_get()


class UnsavedBlendError(ValueError):
    """A path relative to a .blend never saved: Blender would resolve it against the process's working folder
    (a render started from a read-only folder then silently wrote nothing)."""


def blend_path(setting: str, unsaved_folder: str | None = None) -> str:
    """``setting`` made absolute (``//`` is the .blend's folder).  While that folder is unknown: under
    ``unsaved_folder`` when given (the render layer: Blender's temporary folder), else UnsavedBlendError."""
    import bpy

    if setting.startswith("//") and not bpy.data.filepath:
        if unsaved_folder is not None:
            return os.path.join(unsaved_folder, setting[2:])
        raise UnsavedBlendError(f"Save the .blend first: '{setting}' is relative to its folder "
                                f"(or set an absolute folder)")
    return bpy.path.abspath(setting)


def cache_folder(scene) -> Path | None:
    """The scene's cache folder, absolute; None while it is relative to a .blend never saved."""
    try:
        return Path(blend_path(scene.gpu_particles.cache_directory or DEFAULT_FOLDER))
    except UnsavedBlendError:
        return None


def effect_folder(index: int, effect) -> str:
    """The folder of effect ``index``'s checkpoints (an ``EffectInput``)."""
    return f"{index:02d}_" + re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{effect.object_name}_{effect.effect_name}")


def read_manifest(folder: Path) -> dict | None:
    """The folder's manifest, None when there is none; CacheError for one that cannot be used here."""
    path = Path(folder) / MANIFEST
    if not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text())
        found = (manifest["format"], manifest["version"], manifest["vendor"])
    except (OSError, ValueError, KeyError, TypeError):
        raise CacheError(f"The simulation cache manifest '{path}' is damaged: Free the cache and bake again") from None
    expected = (cache_format.FORMAT, addon_version(), gpu_vendor())
    if found[:2] != expected[:2]:
        raise CacheError(f"The simulation cache in '{folder}' was written by GPU Particles {found[1]} (cache format "
                         f"{found[0]}); this is {expected[1]} (format {expected[0]}): Free it and bake again")
    if found[2] != expected[2]:
        raise CacheError(f"The simulation cache in '{folder}' was baked on a {found[2]} GPU and this one is "
                         f"{expected[2]}: results differ between vendors, so Free it and bake again here")
    return manifest


def cached_frames(folder: Path) -> list[int]:
    """Checkpoint frames the manifest lists (the panel's cached range), without checking them."""
    try:
        manifest = read_manifest(folder)
    except CacheError:
        return []
    return sorted(int(f) for f in manifest["frames"]) if manifest else []


def free(folder: Path) -> int:
    """Delete the cache's files (the manifest and the effect folders it names); returns files removed."""
    folder = Path(folder)
    removed = 0
    for child in list(folder.iterdir()) if folder.is_dir() else ():
        if child.is_dir() and any(p.suffix == cache_format.SUFFIX for p in child.iterdir()):
            removed += sum(1 for _ in child.iterdir())
            shutil.rmtree(child)
        elif child.name == MANIFEST or child.name.startswith(f".{MANIFEST}"):
            child.unlink()
            removed += 1
    return removed


class SimCache:
    """The disk store of one simulation's timeline (``Timeline(store=...)``): reads always, writes when ``writing``."""

    def __init__(self, folder: Path, simulation, interval: int, every_frame: bool = False, writing: bool = False):
        self.folder = Path(folder)
        self.simulation = simulation
        self.interval = max(1, interval)
        self.every_frame = every_frame
        self.writing = writing
        self.effects = [effect_folder(i, e) for i, e in enumerate(simulation.snapshot.effects)]
        self.start_frame = simulation.start_frame
        self.manifest = read_manifest(self.folder)
        if self.manifest is not None and not self._same_scene(self.manifest):
            self.manifest = None  # another set of effects or start frame: nothing here applies
        self.written = 0  # checkpoints written by this store

    def _same_scene(self, manifest: dict) -> bool:
        return [e["folder"] for e in manifest["effects"]] == self.effects and manifest["start_frame"] == self.start_frame

    def _path(self, effect: int, frame: int) -> Path:
        return self.folder / self.effects[effect] / f"frame_{frame:06d}{cache_format.SUFFIX}"

    def best(self, frame: int) -> int | None:
        """The latest checkpoint at or before ``frame`` whose keys match the scene's history now."""
        if self.manifest is None:
            return None
        for stored in sorted((int(f) for f in self.manifest["frames"] if int(f) <= frame), reverse=True):
            if stored < self.start_frame:
                continue
            if self.manifest["frames"][str(stored)] == [k.hex() for k in self.simulation.history_keys(stored)]:
                return stored
        return None

    def load(self, frame: int) -> list[SystemState]:
        keys = self.manifest["frames"][str(frame)]
        states = []
        for effect, key in enumerate(keys):
            arrays, meta = cache_format.read(self._path(effect, frame))
            if meta.get("key") != key or meta.get("frame") != frame:
                raise CacheError(f"Cache file '{self._path(effect, frame)}' does not belong to this manifest "
                                 f"(another bake wrote it): Free the cache and bake again")
            # the state arrays (with trails: their ring and heads; inheriting color: the tint), then the origin
            states.append(SystemState(tuple(arrays[:-1]), arrays[-1], meta["step_index"], meta["time"],
                                      meta.get("cursor")))
        return states

    def offer(self, frame: int, systems: list) -> None:
        """After ``frame`` was simulated: write its checkpoint when writing and the frame is one kept."""
        if not self.writing or (not self.every_frame and (frame - self.start_frame) % self.interval):
            return
        keys = [k.hex() for k in self.simulation.history_keys(frame)]
        manifest = self.manifest or self._new_manifest()
        if manifest["frames"].get(str(frame)) == keys and all(self._path(i, frame).is_file() for i in range(len(keys))):
            return  # already there (a rerun over cached frames)
        for effect, (system, key) in enumerate(zip(systems, keys)):
            state = system.snapshot()
            self._path(effect, frame).parent.mkdir(parents=True, exist_ok=True)
            meta = {"frame": frame, "key": key, "step_index": state.step_index, "time": state.time,
                    "cursor": state.cursor}  # a spawned effect's ring cursor (events.Spawner), else None
            cache_format.write_atomic(self._path(effect, frame),
                                      cache_format.encode([*state.arrays, np.asarray(state.origin)], meta))
        frames = manifest["frames"]
        if frames.get(str(frame)) not in (None, keys):  # another history from here on: later frames are stale
            for stale in [f for f in frames if int(f) > frame]:
                del frames[stale]
        frames[str(frame)] = keys
        manifest["effects"] = self._effect_entries()  # the settings of the history the frames now hold
        cache_format.write_atomic(self.folder / MANIFEST, (json.dumps(manifest, indent=1) + "\n").encode())
        self.manifest = manifest
        self.written += 1

    def _new_manifest(self) -> dict:
        import bpy

        self.folder.mkdir(parents=True, exist_ok=True)
        free(self.folder)
        return {
            "format": cache_format.FORMAT, "version": addon_version(), "vendor": gpu_vendor(),
            "blender": bpy.app.version_string, "start_frame": self.start_frame, "interval": self.interval,
            "every_frame": self.every_frame,
            "effects": self._effect_entries(),
            "frames": {},
        }

    def _effect_entries(self) -> list[dict]:
        """Each effect's folder, names and settings key (``SceneSnapshot.effect_key``: the panel compares it)."""
        snapshot = self.simulation.snapshot
        return [{"folder": name, "object": e.object_name, "effect": e.effect_name,
                 "settings_key": snapshot.effect_key(i).hex()}
                for i, (name, e) in enumerate(zip(self.effects, snapshot.effects))]
