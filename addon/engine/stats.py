"""Live statistics for the Stats panel: particles alive, counted on the GPU."""

from __future__ import annotations

import numpy as np

from .kernels import Constant, Image, Kernel, Shared
from .simulation import STATE_READ, ParticleSystem

COUNT_ALIVE = Kernel(
    "count_alive",
    images=(*STATE_READ, Image("alive", "R32UI", atomic=True)),
    constants=(Constant("INT", "count"),),
    shared=(Shared("uint", "group_alive", 1),),
)


def alive_reference(pos_age: np.ndarray, vel_life: np.ndarray) -> int:
    """What count_alive.glsl counts, from (count, 4) state arrays."""
    age, life = pos_age[:, 3], vel_life[:, 3]
    with np.errstate(invalid="ignore"):
        live = (age >= 0) & (age < life) & np.isfinite(pos_age[:, :3]).all(axis=1)
    return int(live.sum())


class AliveCounter:
    """One 1x1 counter texture reused for every effect."""

    def __init__(self, host):
        self.host = host
        self.alive = host.texture("alive", 1, 1, "R32UI")

    def count(self, system: ParticleSystem) -> int:
        self.host.clear(self.alive)
        self.host.dispatch(COUNT_ALIVE, system.groups, {**system.textures, "alive": self.alive},
                           {"count": system.count})
        return int(self.host.read(self.alive)[0, 0])
