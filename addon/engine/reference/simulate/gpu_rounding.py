"""How far a GPU's compact (half-float) state may be from the reference's after one frame from the same state.

Both sides load the same stored halves, compute in float32 and store halves.  The reference
rounds every operation in the kernel's order; a GPU may not: its compiler contracts a * b + c
into one fused multiply-add (the product unrounded: up to half a float32 ulp of it apart) and
may regroup uniform terms, its division, square root and normalize are approximations (GLSL
allows 2.5 ulp; we count 3 to 4), and its sin and cos carry an absolute error (GLSL leaves it
open; NVIDIA documents 2^-20.5 for sin.approx.f32 over the angles used; we allow ``SINE``, twice
that).  The kernel's ages and lifetimes are unfused (``precise``) and match exactly; they are
not bounded here.  With ``ULP`` = 2^-23, the float32 spacing at 1, the bound follows from:

1. Float32: a stage that rounds, fuses or approximates, fed inputs that differ by ``e``, gives
   results that differ by at most its first-order response to ``e`` plus ``k`` ulps of the
   magnitudes it combines (``_ulps``; ``k`` is counted per stage below).  In a dot product
   (matrices, normals) that magnitude is the sum of the products' magnitudes, so a small
   component of a long vector is known to float32 ulps of the vector, not of the component.
   Errors given per component go through a matrix ``M`` as ``|M| e``: the worst case.
2. Store: ``|half(a) - half(b)| <= |a - b| + s``, ``s`` the half spacing at ``max(|a|, |b|)
   <= |a| + e`` (round to nearest: half a spacing each side; toward zero: under one spacing,
   on the same side).  Equal floats store equal halves: a velocity not touched stays exact.
3. A simulate step (``_step``): the load and store re-base positions on the step's origins (1
   ulp each); a particle born in the step starts from the emitter's error (``_emission_error``:
   the transcendentals of its random directions and the cancellation in sqrt(1 - z * z) near
   the poles, where one ulp of difference in 1 - z * z moves r by up to sqrt(ULP)).  Explicit
   Euler: the position error grows by ``lived *`` the velocity error; the velocity error is
   damped by ``1 - drag * lived`` and grows by ``lived *`` the acceleration error, its own
   arithmetic plus its change over the position error (measured by the reference at the
   displaced positions); a collider maps both through its push and reflection
   (``_collision_error``).  Then the store adds the half spacing of the value stored.
4. A frame (``frame_bound``) carries the errors through its substeps at the intermediate
   values: each store adds the half spacing of the value then, which is larger than the final
   one's where a coordinate shrinks later (positions are re-based on the moving emitter).

Not bounded: a collider hit that one side sees and the other does not (a particle within
the bound of a surface when it lands), which needs a half-step flip first and is rare.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...seam.records import COLLIDER, FORCE_FIELD, TRIANGLE
from ...seam.tables import COLLIDER_TYPES, EMITTER_SHAPES, FIELD_TYPES
from .simulation import Inputs, acceleration_at, force_fields

ULP = 2.0**-23  # float32 spacing at 1
SINE = 2.0**-19.5  # absolute error allowed for a GPU's sin and cos of angles in [0, 2 pi]: twice NVIDIA's


def half_spacing(values) -> np.ndarray:
    """The half-float spacing at each value (the smallest half denormal near zero, 32 from 2^15 up)."""
    return np.spacing(np.minimum(np.abs(values), 2.0**15).astype(np.float16)).astype(np.float64)


def frame_bound(traces: list[dict], inputs: Inputs) -> tuple[np.ndarray, np.ndarray]:
    """Per particle and component, the most a GPU's stored position and velocity may differ from the
    reference's after the simulate steps ``traces`` recorded (``step_frame(..., traces=...)``)."""
    error = np.zeros((len(traces[0]["lived"]), 3)), np.zeros((len(traces[0]["lived"]), 3))
    for trace in traces:
        error = _step(*error, trace, inputs)
    return error


def _ulps(k: float, magnitude) -> np.ndarray:
    return k * ULP * np.asarray(magnitude, np.float64)


def _stored(error, values) -> np.ndarray:
    return np.where(error > 0, error + half_spacing(np.abs(values) + error), 0.0)


def _abs(values) -> np.ndarray:
    return np.abs(np.asarray(values, np.float64))


def _norm(values) -> np.ndarray:
    return np.linalg.norm(np.asarray(values, np.float64), axis=-1, keepdims=True)


def _step(e_pos, e_vel, t: dict, inputs: Inputs) -> tuple[np.ndarray, np.ndarray]:
    """One simulate step: the loaded errors through load, emission, integration, collisions and store."""
    c = t["c"]
    e_pos = e_pos + _ulps(1, _abs(t["loaded"]))  # pos_age.xyz + loaded_origin
    e_vel = e_vel.copy()
    if len(t["born"]):
        e_pos[t["born"]], e_vel[t["born"]] = _emission_error(t["emission"], t["lived"][t["born"]], c, inputs)
    x, v, a = _abs(t["position"]), _abs(t["velocity"]), _abs(t["acceleration"])
    h, d = t["lived"][:, None].astype(np.float64), t["damping"][:, None].astype(np.float64)
    # position += velocity * lived: the product may be fused (2 ulps); velocity += acceleration * lived
    # - velocity * damping: one of the products may be fused, then a subtraction and an addition (3 ulps)
    moved = e_pos + h * e_vel + _ulps(2, x + v * h)
    integrated = (1 - d) * e_vel + h * _acceleration_error(t, e_pos, inputs) + _ulps(3, v * (1 + d) + a * h)
    for hit in t["hits"]:
        moved, integrated = _collision_error(hit, moved, integrated)
    active = t["active"][:, None]
    e_pos = np.where(active, moved, e_pos)
    stored_pos = _abs(t["stored_position"])
    e_pos = _stored(e_pos + _ulps(1, stored_pos), stored_pos)  # - stored_origin, clamped, to half
    e_vel = np.where(active, _stored(np.where(active, integrated, 0), t["stored_velocity"]), e_vel)
    return e_pos, e_vel


def _direction_error(direction) -> np.ndarray:
    """Error of random_direction()'s (r cos phi, r sin phi, z): z = 2u - 1 is exact, 1 - z * z fused or not
    differs by up to ULP, which moves r = sqrt() by min(sqrt(ULP), ULP / r), plus sqrt's 3 ulps; then
    cos and sin (``SINE``) and the product (1 ulp)."""
    r = np.hypot(*_abs(direction)[:, :2].T)[:, None]
    dr = np.minimum(np.sqrt(ULP), ULP / np.maximum(r, 1e-30)) + _ulps(3, r)
    xy = dr + r * (SINE + ULP)
    return np.concatenate([xy, xy, np.zeros_like(r)], axis=1)


def _cone_error(u, cos_max) -> np.ndarray:
    """Error of random_in_cone()'s unit vector: cos_theta = 1 - u * (1 - cos_max) (fused or not: 2 ulps),
    sin_theta = sqrt(1 - cos^2) (its argument 2 |cos| + 1 ulps apart, moving sqrt as in
    ``_direction_error``), the axis (a division), the tangent (normalize of a cross product at least 0.43
    long) and the bitangent (a cross product): 60 ulps together, scaled by sin_theta, with cos and sin."""
    cos_theta = 1.0 - np.asarray(u, np.float64) * (1.0 - float(cos_max))
    sin_theta = np.sqrt(np.maximum(0.0, 1.0 - cos_theta * cos_theta))
    d_cos = 2 * ULP
    d_square = ULP * (2 * 2 * np.abs(cos_theta) + 1)
    d_sin = np.minimum(np.sqrt(d_square), d_square / np.maximum(sin_theta, 1e-30)) + _ulps(3, sin_theta)
    return (d_cos + d_sin + sin_theta * (2 * SINE + 60 * ULP) + 8 * ULP)[:, None]


def _emission_error(em: dict, lived, c: dict, inputs: Inputs) -> tuple[np.ndarray, np.ndarray]:
    """Position and velocity error of particles born in the step (emit() of simulate.glsl)."""
    shape = c["emitter_shape"]
    local = _abs(em["local"])
    if shape == EMITTER_SHAPES["SPHERE"]:  # normal * (size * pow(u, 1/3)): pow 4 ulps, 2 products
        e_local = _norm(local) * (_direction_error(em["normal"]) + 6 * ULP)
    elif shape == EMITTER_SHAPES["MESH"]:  # barycentric: sqrt 3 ulps, 4 products and sums
        tri = TRIANGLE.read(inputs.triangles.reshape(-1, TRIANGLE.texels, 4))
        corners = max(_abs(tri[k]).max() for k in ("v0", "v1", "v2"))
        e_local = np.full_like(local, _ulps(8 * 3, corners))
    else:  # POINT: zero; BOX: (2u - 1) * size, one product
        e_local = _ulps(1, local)
    prev, cur = (np.asarray(c[k], np.float64) for k in ("emitter_prev", "emitter_cur"))
    start = _abs(em["start"])

    def transformed(m):  # m * vec4(local, 1): a dot product of 4 terms (4 ulps)
        return e_local @ np.abs(m[:3, :3]).T + _ulps(4, local @ np.abs(m[:3, :3]).T + np.abs(m[:3, 3]))

    e_start, e_end = transformed(prev), transformed(cur)
    span = _abs(np.asarray(em["end"], np.float64) - em["start"])
    fraction = 1.0 - np.asarray(lived, np.float64)[:, None] / float(c["dt"])  # a division and a subtraction: 4 ulps
    e_pos = e_start + fraction * (e_start + e_end) + _ulps(4, span) + _ulps(2, start + span)

    rotation = cur[:3, :3]
    base = _abs(em["base"])
    e_base = _ulps(4, np.abs(rotation) @ _abs(c["initial_velocity"]))  # mat3 * vector, then length
    if em["cone_u"] is not None:  # speed * random_in_cone(base / speed, ...)
        e_base = _norm(base) * (_cone_error(em["cone_u"], c["cone_cos"]) + 4 * ULP)
    if shape in (EMITTER_SHAPES["POINT"], EMITTER_SHAPES["SPHERE"]):
        e_normal = _direction_error(em["normal"])
    else:  # normalize(local) or a triangle's normal
        e_normal = np.full_like(local, 6 * ULP)
    turned = np.asarray(em["normal"], np.float64) @ rotation.T
    world_normal = _abs(turned) / np.maximum(_norm(turned), 1e-30)
    e_world_normal = (e_normal @ np.abs(rotation).T) / np.maximum(_norm(turned), 1e-30) + 8 * ULP  # normalize
    normal_speed, random_speed = abs(float(c["normal_speed"])), np.asarray(em["random_speed"], np.float64)[:, None]
    inherit = abs(float(c["inherit_velocity"])) / float(c["dt"])  # a division per particle: 3 ulps
    jitter = _abs(em["jitter"])
    e_vel = (e_base + normal_speed * e_world_normal + random_speed * _direction_error(em["jitter"])
             + inherit * (e_start + e_end + _ulps(3, span))
             # the sum of 4 vectors, component by component, its products fused or not
             + _ulps(4, base + normal_speed * world_normal + random_speed * jitter + inherit * span))
    return e_pos, e_vel


def _acceleration_error(t: dict, e_pos, inputs: Inputs) -> np.ndarray:
    """The acceleration's own arithmetic (16 ulps of each term: trilinear noise, pow, length, division), plus
    its change over the position error, one axis at a time (the field is smooth or piecewise linear there)."""
    c, position = t["c"], t["position"]
    terms = np.full((len(position), 1), np.linalg.norm(np.asarray(c["gravity"], np.float64)))
    if c["turbulence_strength"] != 0:
        terms = terms + abs(float(c["turbulence_strength"])) * np.abs(inputs.noise[..., :3]).max()
    for f in range(inputs.field_count):
        terms = terms + _norm(force_fields(position, replace(inputs, fields=inputs.fields[f:f + 1], field_count=1)))
    error = np.broadcast_to(_ulps(16, terms), position.shape).copy()
    fields = FORCE_FIELD.read(inputs.fields[:inputs.field_count])
    varies = c["turbulence_strength"] != 0 or bool(np.any((fields["kind"] != FIELD_TYPES["WIND"])
                                                          | (fields["falloff_power"] != 0)))
    if varies and e_pos.any():
        for axis in range(3):
            change = np.zeros_like(error)
            for sign in (-1.0, 1.0):
                shifted = np.asarray(position, np.float64).copy()
                shifted[:, axis] += sign * e_pos[:, axis]
                change = np.maximum(change, _abs(acceleration_at(shifted.astype(np.float32), c, inputs)
                                                 - t["acceleration"]))
            error += change
    return error


def _collision_error(hit: dict, e_pos, e_vel) -> tuple[np.ndarray, np.ndarray]:
    """Through collide(), first order, with each matrix's absolute values (the worst case for errors given
    per component): to local (4-term dot products), the push onto the surface (the plane's and box's
    pushed coordinate is set exactly; the sphere scales the local error by radius / distance and turns
    its normal by error / distance), back to world; for reflected particles the velocity relative to the
    surface, to local, split along the normal n (tangential: (I - n n^T) v, normal: n (n . v)), scaled
    by 1 - friction and -bounce, back to world; each stage adds 2 to 4 ulps of the magnitudes it sums."""
    row, pushed_rows, reflect = hit["row"].astype(np.float64), hit["hit"], hit["reflect"]
    collider = COLLIDER.read(row)
    to_local, to_world, moving = (np.abs(collider[k][:, :3]) for k in ("to_local", "to_world", "surface_velocity"))
    kind, bounce, friction = (collider[k] for k in ("kind", "bounce", "friction"))
    pushed, normal = np.asarray(hit["pushed"], np.float64), np.asarray(hit["normal"], np.float64)
    e_local = e_pos @ to_local.T + _ulps(4, _abs(hit["position"]) @ to_local.T + np.abs(collider["to_local"][:, 3]))
    e_normal = np.zeros((len(normal), 1))
    if kind == COLLIDER_TYPES["SPHERE"]:
        e_normal = _norm(e_local) / np.maximum(_norm(hit["local"]), 1e-30) + 6 * ULP
        e_local = np.broadcast_to((collider["half_size"][0] + collider["thickness"]) * e_normal, e_local.shape)
    else:
        e_local = np.where(normal != 0, 0.0, e_local)
    e_moved = e_local @ to_world.T + _ulps(4, np.abs(pushed) @ to_world.T + np.abs(collider["to_world"][:, 3]))
    surface = pushed @ collider["surface_velocity"][:, :3].T + collider["surface_velocity"][:, 3]
    e_surface = e_local @ moving.T + _ulps(4, np.abs(pushed) @ moving.T + np.abs(collider["surface_velocity"][:, 3]))
    relative = np.asarray(hit["velocity"], np.float64) - surface
    v = relative @ collider["to_local"][:, :3].T
    e_v = (e_vel + e_surface + _ulps(1, np.abs(relative))) @ to_local.T + _ulps(3, np.abs(relative) @ to_local.T)
    into = np.sum(v * normal, axis=1, keepdims=True)
    tangential, normal_part = v - normal * into, normal * (into * bounce)
    n = np.abs(normal)
    e_into = np.sum(n * e_v, axis=1, keepdims=True) + _norm(v) * e_normal + _ulps(3, np.sum(n * np.abs(v), axis=1, keepdims=True))
    e_turn = e_normal * (np.abs(into) + n * _norm(v))  # n's error moves both parts
    tangential_map = np.abs(np.identity(3) - normal[:, :, None] * normal[:, None, :])
    e_tangential = np.einsum("nij,nj->ni", tangential_map, e_v) + e_turn + _ulps(2, np.abs(v) + n * np.abs(into))
    e_normal_part = bounce * (n * e_into + e_turn) + _ulps(2, np.abs(normal_part))
    bounced = tangential * (1 - friction) - normal_part
    e_bounced = (1 - friction) * e_tangential + e_normal_part + _ulps(2, np.abs(tangential) * (1 - friction) + np.abs(normal_part))
    e_reflected = e_bounced @ to_world.T + e_surface + _ulps(4, np.abs(bounced) @ to_world.T + np.abs(surface))
    e_pos = np.where(pushed_rows[:, None], e_moved, e_pos)
    return e_pos, np.where(reflect[:, None], e_reflected, e_vel)
