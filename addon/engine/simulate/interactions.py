"""Particles acting on each other within one effect (``interaction``): the neighbour grid, then the step that uses it.

Each substep, after the simulate dispatch has moved every particle on its own (forces, colliders, events)::

    grid.build(pos_age)                      # neighbours.py: the live slots by cell of the moved positions
    STEPS[interaction](system, h, ...)       # the interaction's kernels, gathering through the grid

An effect with interaction NONE makes none of this: no image, no dispatch.  Nothing here outlives a substep (the
grid is rebuilt from the state), so checkpoints and the disk cache hold the state alone.
"""

from __future__ import annotations

from collections.abc import Callable

from ..settings.settings import EffectSettings, SettingsError
from .flocking import flock_step
from .fluids import fluid_step
from .granular import check_granular, granular_step
from .neighbours import NeighbourGrid, check_interacting, check_radius


def check_interaction(settings: EffectSettings) -> None:
    """Clear errors for settings an interaction cannot run with."""
    if settings.interaction == "NONE":
        return
    check_interacting(settings.count)
    check_radius(settings.interaction_radius)
    if settings.state_layout != "FULL":
        raise SettingsError(f"interaction {settings.interaction} needs state_layout FULL (world positions in float32), "
                            "not COMPACT")
    check_granular(settings)


# interaction -> its step after the grid is built: step(system, grid, h, simulate textures, simulate constants)
STEPS: dict[str, Callable] = {"GRANULAR": granular_step, "FLUID": fluid_step, "FLOCKING": flock_step}
# Whether the step reads the velocities the grid's build copies (the fluid's iterations read positions only;
# fluid_move writes the velocities its velocity passes read into the grid's velocity image).
READS_VELOCITY = {"GRANULAR": True, "FLUID": False, "FLOCKING": True}


class Interactions:
    """One effect's interaction: its neighbour grid and the step that gathers through it."""

    def __init__(self, host, settings: EffectSettings, width: int, rows: int):
        check_interaction(settings)
        self.host, self.width, self.rows = host, width, rows
        self.grid = NeighbourGrid(host, settings.count, width, rows)
        self._scratch: dict = {}
        self.settled = None  # the images simulate's GRAINS pass reads (granular.py)

    def scratch(self, names: tuple[str, ...], texels: int = 1) -> tuple:
        """RGBA32F images of a step's own (iterates, sums), ``texels`` side by side a particle (a shader binds
        eight images at most: neighbours.py), made on first use and kept: nothing in them outlives a substep."""
        for name in names:
            if name not in self._scratch:
                self._scratch[name] = self.host.texture(name, self.width * texels, self.rows, "RGBA32F")
        return tuple(self._scratch[name] for name in names)

    def reset(self) -> None:
        self.grid.reset()

    def step(self, system, h: float, textures: dict, constants: dict) -> None:
        """The grid of the simulated positions, then the interaction's step of ``h`` seconds (``textures`` and
        ``constants``: the substep's simulate dispatch's, for steps that collide again)."""
        interaction = system.settings.interaction
        self.grid.build(system.pos_age, system.vel_life, system.settings.interaction_radius, READS_VELOCITY[interaction])
        STEPS[interaction](system, self.grid, h, textures, constants)

    def read_overflow(self) -> int:
        return self.grid.read_overflow()
