"""Reference of granular_solve.glsl: one Jacobi iteration of the grains' contacts, in the grid's neighbour order."""

from __future__ import annotations

import numpy as np

from . import neighbours

F = np.float32
COHESION_REACH = F(1.1)


def solve_iteration(pos_age, vel_life, iterate, values: dict, first: bool, stabilising: bool) -> np.ndarray:
    """The next iterate, (count, 2, 3) float32 (position, shift), from ``iterate`` (ignored when ``first``)."""
    pos_age, vel_life = np.asarray(pos_age, F), np.asarray(vel_life, F)
    fall = np.asarray(values["grain_fall"], F)
    if first:
        x = pos_age[:, :3] + fall
        shift = np.broadcast_to(fall, x.shape).astype(F)
    else:
        x, shift = np.asarray(iterate[:, 0], F), np.asarray(iterate[:, 1], F)
    start = pos_age[:, :3] - vel_life[:, :3] * F(values["grain_dt"]) + shift
    lists, _ = neighbours.neighbour_lists(pos_age, vel_life, values["grid_radius"], values["grid_inverse_cell"],
                                         values["grid_table"])
    up = np.asarray(values["grain_up"], F)
    heights = pos_age[:, :3] @ up
    out_x, out_shift = x.copy(), shift.copy()
    for i in np.flatnonzero(neighbours.live(pos_age, vel_life)):
        at = start[i] if stabilising else x[i]
        total, contacts = np.zeros(3, F), 0
        for j in lists[i]:
            y = start[j] if stabilising else x[j]
            share = F(1.0) / (F(1.0) + np.exp(np.clip(F(values["mass_scaling"]) * (heights[j] - heights[i]), -30, 30)))
            correction = _contact(at, y, F(share), values, stabilising, x[i] - start[i], y - start[j])
            if correction is not None:
                total += correction
                contacts += 1
        if contacts:
            move = total * F(values["relaxation"] / contacts)
            out_x[i] = x[i] + move
            if stabilising:
                out_shift[i] = shift[i] + move
    return np.stack([out_x, out_shift], axis=1)


def _contact(x, y, share, values, stabilising, moved_x, moved_y):
    """contact_correction: None where the pair does not touch."""
    radius, cohesion = F(values["grain_radius"]), F(values["cohesion"])
    d = x - y
    dist = np.sqrt(np.dot(d, d))
    contact = F(2.0) * radius
    reach = contact * (COHESION_REACH if cohesion > 0 and not stabilising else F(1.0))
    if not (dist > 0 and dist < reach):
        return None
    normal = d / dist
    depth = contact - dist
    if depth <= 0:
        return normal * (cohesion * depth * share)
    correction = normal * depth
    if not stabilising:
        relative = moved_x - moved_y
        tangential = relative - normal * np.dot(relative, normal)
        slide = np.sqrt(np.dot(tangential, tangential))
        if slide < F(values["static_friction"]) * depth:
            correction = correction - tangential
        else:
            correction = correction - tangential * min(F(values["dynamic_friction"]) * depth / max(slide, F(1e-30)), 1.0)
    return correction * share
