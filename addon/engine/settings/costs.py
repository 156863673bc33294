"""What an edit costs, by the part of the scene it touches: a setting's ``Field.affects`` tag, or another part of
a scene snapshot (scene/edits.py compares two and gives the dearest).

Pure, beside the Field table, so that the add-on's properties pick each setting's update hook from it without
importing the scene reader (which reads the properties).
"""

from __future__ import annotations

from enum import IntEnum

from .settings import Field


class Edit(IntEnum):
    """What an edit costs, cheapest first."""

    NONE = 0  # nothing drawn or simulated changed
    REDRAW = 1  # the same systems drawn again: what a draw reads each time (glints, color ramps)
    RELOOK = 2  # the simulated history, checkpoints and disk cache kept, drawn with the new settings
    RESIMULATE = 3  # a new simulation from the start (or the disk cache, where its key still matches)


COSTS = {
    # A setting, by its Field's affects tag:
    "simulation": Edit.RESIMULATE,
    "look": Edit.RELOOK,
    "render": Edit.RELOOK,  # the compositor is made again
    "glints": Edit.REDRAW,
    # The rest of a snapshot:
    "effects": Edit.RESIMULATE,  # which effects there are: added, removed, renamed, switched off, reordered
    "time": Edit.RESIMULATE,  # the simulation start and the time step
    "history": Edit.RESIMULATE,  # an effect's history key (its emitter mesh, the colors it inherits): effect_key
    "cloud": Edit.RESIMULATE,  # the CSG point cloud's settings, or whether there is one
    "emitters": Edit.RESIMULATE,  # an emitter moved by hand at the simulated frame (FrameInputs: emitters_edit)
    "ramp": Edit.REDRAW,  # an effect's color ramp, read at every draw (one a child inherits: its history)
}


def cost_of(field: Field) -> Edit:
    """What an edit of the setting ``field`` costs."""
    return COSTS[field.affects]
