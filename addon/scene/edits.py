"""What an edit costs, decided here only: nothing, a redraw, a redraw of the kept history in a new look, or a
new simulation.

Every part of a :class:`~.snapshot.SceneSnapshot` has a cost in ``COSTS`` (engine/settings/costs.py, beside
the Field table, where the properties' update hooks read it too); a setting's part is its ``Field.affects`` tag.
:func:`edit_between` compares the snapshot a simulation was made from with the scene as read now and gives the
dearest cost of what differs (:func:`changes` says what that is); :func:`emitters_edit` does the same for the
emitters at the simulated frame, which a snapshot (the same for every frame) does not hold.  The viewport
overlay, the renderer (viewport, F12 and bakes) and the simulation's timeline all ask it.  docs/features.md
(What an edit costs) lists the settings by cost.
"""

from __future__ import annotations

import numpy as np

from ..engine.settings.costs import COSTS, Edit, cost_of
from ..engine.settings.settings import EFFECT_FIELDS, RENDER_FIELDS


def render_edit(simulated, now) -> Edit:
    """What the edit between two render settings costs (the viewport's compositors are made again from RELOOK)."""
    return max((cost for _, cost in _settings_changes(simulated, now, RENDER_FIELDS)), default=Edit.NONE)


def edit_between(simulated, now) -> Edit:
    """What taking the scene read as ``now`` costs a simulation made from ``simulated`` (two SceneSnapshots)."""
    return max((cost for _, cost in changes(simulated, now)), default=Edit.NONE)


def changes(simulated, now) -> list[tuple[str, Edit]]:
    """(what, cost) of each difference between two snapshots: a setting's name (an effect's as
    'Object/Effect: name'), else the part of ``COSTS``."""
    if now is simulated:
        return []
    names = [(e.object_name, e.effect_name) for e in simulated.effects]
    if names != [(e.object_name, e.effect_name) for e in now.effects]:
        return [("effects", COSTS["effects"])]
    found = list(_settings_changes(simulated.render, now.render, RENDER_FIELDS))
    if (simulated.simulation_start, simulated.seconds_per_frame) != (now.simulation_start, now.seconds_per_frame):
        found.append(("time", COSTS["time"]))
    if simulated.cloud != now.cloud:
        found.append(("cloud", COSTS["cloud"]))
    for index, (before, after) in enumerate(zip(simulated.effects, now.effects)):
        effect = f"{after.object_name}/{after.effect_name}"
        edited = [(f"{effect}: {name}", cost) for name, cost in _settings_changes(before.settings, after.settings)]
        found += edited
        if simulated.effect_key(index) != now.effect_key(index) and all(c < Edit.RESIMULATE for _, c in edited):
            found.append((f"{effect}: history", COSTS["history"]))
        if not _same_ramp(before.ramp, after.ramp):
            found.append((f"{effect}: ramp", COSTS["ramp"]))
    return found


def emitters_edit(simulated, now) -> Edit:
    """What the emitters' world matrices read now at the simulated frame cost, against those the frame was
    simulated with (``FrameInputs.emitters``): one moved by hand changed its history."""
    moved = any(not (np.array_equal(m, c) or np.allclose(m, c)) for m, c in zip(simulated, now))
    return COSTS["emitters"] if moved else Edit.NONE


def _settings_changes(simulated, now, fields=EFFECT_FIELDS):
    """(name, cost) of each setting that differs between two settings objects."""
    if simulated == now:
        return
    for field in fields:
        if getattr(simulated, field.name) != getattr(now, field.name):
            yield field.name, cost_of(field)


def _same_ramp(a, b) -> bool:
    return a is b or (a is not None and b is not None and np.array_equal(a, b))
