"""Effect presets: JSON files under ``presets/`` (shipped) or a user folder.

A preset holds effect settings, render settings and an optional "stage" (a
camera and emitter placement the command-line bake builds a scene from).  A family
of sub-emitters (events.py) lists its other effects under "spawned", each with a
"label" and its "effect" settings, whose ``spawn_from`` names the preset's label or
an earlier spawned label; they are added on the same object.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..seam.resources import resource_dir
from .settings import (
    EFFECT_FIELDS,
    RENDER_FIELDS,
    EffectSettings,
    RenderSettings,
    SettingsError,
    as_dict,
    clamped,
    effect_settings,
    migrated,
    render_settings,
)

FORMAT_VERSION = 2  # 2: one iterations and one cohesion for every interaction (settings.RENAMED_FIELDS)
_INT32 = 2**31  # Blender's IntProperty holds -2^31 .. 2^31 - 1


class PresetError(ValueError):
    """A preset that cannot be used; nothing was changed."""


@dataclass(frozen=True)
class Preset:
    name: str
    label: str
    description: str
    effect: EffectSettings
    render: RenderSettings
    stage: dict
    spawned: tuple[tuple[str, EffectSettings], ...] = ()  # (label, settings) of the effects born from events
    # Numbers the file gives past their fields' bounds, as given: (owner: "effect", "render" or spawned_owner(label),
    # setting, value).  The settings above hold them clamped; applied, an effect keeps them as given, and reading
    # it clamps them and says so (settings.clamped), as for a value a script sets.
    beyond: tuple[tuple[str, str, Any], ...] = ()


def preset_dir() -> Path:
    return resource_dir("presets")


def preset_names(folder: Path | None = None) -> list[str]:
    return sorted(p.stem for p in (folder or preset_dir()).glob("*.json"))


def load_preset(name: str, folder: Path | None = None, extra: tuple[Path, ...] = ()) -> Preset:
    """The preset ``name`` from ``folder`` (shipped by default), else from the ``extra`` (user) folders."""
    folders = (folder or preset_dir(), *extra)
    for candidate in folders:
        path = candidate / f"{name}.json"
        if path.is_file():
            return parse_preset(path)
    known = ", ".join(sorted({n for f in folders if f.is_dir() for n in preset_names(f)})) or "(none)"
    raise PresetError(f"unknown preset '{name}'; known presets: {known}")


def preset_file_name(label: str) -> str:
    """A file stem for a user's preset label: lower case, letters, digits and underscores."""
    stem = "".join(c if c.isalnum() else "_" for c in label.strip().lower()).strip("_")
    if not stem:
        raise PresetError("a preset needs a name with at least one letter or digit")
    return stem


def parse_preset(path: Path) -> Preset:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise PresetError(f"preset {path} is not readable JSON: {error}") from None
    if not isinstance(data, dict):
        raise PresetError(f"preset {path} must be a JSON object")
    version = data.get("format_version")
    if not isinstance(version, int) or version < 1:
        raise PresetError(f"preset {path} has no valid format_version")
    if version > FORMAT_VERSION:
        raise PresetError(
            f"preset {path} is format {version}, newer than this GPU Particles reads ({FORMAT_VERSION}); update the extension"
        )
    effects = _effects_of(version)
    try:
        effect, beyond = _settings(effect_settings, EFFECT_FIELDS, effects(data.get("effect", {})), "effect")
        render, render_beyond = _settings(render_settings, RENDER_FIELDS, data.get("render", {}), "render")
    except SettingsError as error:
        raise PresetError(f"preset {path}: {error}") from None
    stage = data.get("stage", {})
    if not isinstance(stage, dict):
        raise PresetError(f"preset {path}: 'stage' must be an object")
    name = Path(path).stem
    label = str(data.get("label", name))
    spawned, spawned_beyond = _spawned(path, label, data.get("spawned", []), effects)
    return Preset(name, label, str(data.get("description", "")), effect, render, stage, spawned,
                  beyond + render_beyond + spawned_beyond)


def spawned_owner(label: str) -> str:
    """A spawned effect's owner in ``Preset.beyond``."""
    return f"spawned {label}"


def _settings(build, fields, values, owner: str):
    """Settings from a preset's values with numbers past their bounds clamped, and those numbers as given
    (``Preset.beyond``; an integer as far as Blender's int32 property holds)."""
    fixed, _ = clamped(fields, values)
    settings = build(fixed)
    kinds = {f.name: f.kind for f in fields}
    beyond = tuple((owner, name, max(-_INT32, min(_INT32 - 1, int(value))) if kinds[name] == "int" else value)
                   for name, value in values.items() if fixed[name] != value)
    return settings, beyond


def _effects_of(version: int):
    """What an effect's values of a preset of format ``version`` are now (settings.migrated before format 2)."""
    return migrated if version < 2 else dict


def _spawned(path: Path, label: str, entries, effects) -> tuple[tuple[tuple[str, EffectSettings], ...], tuple]:
    """The preset's spawned effects (their values through ``effects``: _effects_of), each spawning from the preset's
    effect or one listed before it, and their numbers past bounds (``Preset.beyond``)."""
    if not isinstance(entries, list) or not all(isinstance(e, dict) and "label" in e for e in entries):
        raise PresetError(f"preset {path}: 'spawned' must be a list of objects with a label and an effect")
    known, family, beyond = {label}, [], ()
    for entry in entries:
        try:
            settings, given = _settings(effect_settings, EFFECT_FIELDS, effects(entry.get("effect", {})),
                                        spawned_owner(str(entry["label"])))
        except SettingsError as error:
            raise PresetError(f"preset {path}: spawned '{entry['label']}': {error}") from None
        if settings.spawn_from not in known:
            raise PresetError(f"preset {path}: spawned '{entry['label']}' spawns from '{settings.spawn_from}', "
                              f"which is none of {', '.join(sorted(known))}")
        known.add(str(entry["label"]))
        family.append((str(entry["label"]), settings))
        beyond += given
    return tuple(family), beyond


def write_preset(path: Path, label: str, effect: EffectSettings, render: RenderSettings, description: str = "",
                 spawned: tuple[tuple[str, EffectSettings], ...] = ()) -> None:
    """``spawned``: the family's other effects as :class:`Preset` holds them, each ``spawn_from`` naming
    ``label`` or a label before it."""
    data = {
        "format_version": FORMAT_VERSION,
        "label": label,
        "description": description,
        "effect": as_dict(effect),
        "render": as_dict(render),
        **({"spawned": [{"label": name, "effect": as_dict(settings)} for name, settings in spawned]}
           if spawned else {}),
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")
