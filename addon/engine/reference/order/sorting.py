"""Reference of include/particle_key.glsl, sort_keys.glsl and sortedness.glsl.

The network passes themselves have their reference in ``sort_schedule``
(``*_comparators`` + ``apply_pass``), which the GPU must match exactly.
"""

from __future__ import annotations

import numpy as np

from ...order.sorting import KEY_CONSTANTS
from ...seam.records import PARTICLE
from ...seam.tables import SIZES, SORT_KEY_MODES
from ..seam.exact import flush_denormals
from ..seam.random import pcg_hash

F = np.float32
U = np.uint32
KEY_LAST = U(0xFFFFFFFF)
GRID_CELLS = SIZES["GRID_CELLS"]  # cells per axis before the grid wraps (particle_key.glsl)


def spread_bits(v: np.ndarray) -> np.ndarray:
    """The 8 low bits of v spread to every third bit (the Morton interleave of sort_key.glsl)."""
    v = np.asarray(v, dtype=U)
    with np.errstate(over="ignore"):
        v = (v * U(0x00010001)) & U(0xFF0000FF)
        v = (v * U(0x00000101)) & U(0x0F00F00F)
        v = (v * U(0x00000011)) & U(0xC30C30C3)
        return (v * U(0x00000005)) & U(0x49249249)


def ordered_key(x) -> np.ndarray:
    x = flush_denormals(x)
    bits = x.view(U)
    keys = np.where(bits & U(0x80000000), ~bits, bits | U(0x80000000)).astype(U)
    return np.where(np.isnan(x), KEY_LAST, keys)


def particle_keys(pos_age: np.ndarray, vel_life: np.ndarray, key, origin=(0.0, 0.0, 0.0)) -> np.ndarray:
    """Keys of particles stored relative to ``origin`` (the constants fold it in, as on the GPU)."""
    c = key.constants(origin)
    for constant in KEY_CONSTANTS:
        c.update(constant.unpack(c[constant.name]))
    particle = PARTICLE.read_images(pos_age, vel_life)
    position, age, life = particle["position"].astype(F), particle["age"], particle["life"]
    waiting = (F(c["spawn_keyed"]) != 0) & (life == 0) & (age < 0)
    position = flush_denormals(np.where(waiting[:, None], np.asarray(c["spawn_position"], dtype=F), position))
    with np.errstate(invalid="ignore", over="ignore"):
        shows = (waiting | ((age >= 0) & (age < life))) & np.isfinite(position).all(axis=1)
        if c["key_mode"] == SORT_KEY_MODES["GRID"]:
            origin, cell_size = np.asarray(c["grid_origin"], dtype=F), F(c["cell_size"])
            cell = np.mod(np.floor((position - origin).astype(F) / cell_size), F(GRID_CELLS)).astype(F)
            cell = np.nan_to_num(cell).astype(U)
            keys = (spread_bits(cell[:, 2]) << U(2)) | (spread_bits(cell[:, 1]) << U(1)) | spread_bits(cell[:, 0])
        else:
            axis, p = np.asarray(c["depth_axis"], dtype=F), position
            keys = ordered_key(((axis[0] * p[:, 0] + axis[1] * p[:, 1]) + axis[2] * p[:, 2]) + F(c["depth_offset"]))
    return np.where(shows, keys, KEY_LAST).astype(U)


def sortedness(keys: np.ndarray, samples: int, seed: int) -> tuple[int, int, int]:
    """(adjacent pairs in order, concordant, discordant sampled pairs), as the kernel counts them."""
    keys = np.asarray(keys, dtype=U)
    count = len(keys)
    adjacent = int(np.count_nonzero(keys[:-1] <= keys[1:]))
    t = np.arange(samples, dtype=U)
    with np.errstate(over="ignore"):
        a = pcg_hash(t ^ pcg_hash(U(seed))) % U(count)
        b = pcg_hash((t + U(0x9E3779B9)) ^ pcg_hash(U(seed + 1))) % U(count - 1)
    b = b + (b >= a).astype(U)
    key_a, key_b = keys[np.minimum(a, b)], keys[np.maximum(a, b)]
    return adjacent, int(np.count_nonzero(key_a < key_b)), int(np.count_nonzero(key_a > key_b))
