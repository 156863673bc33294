"""Reference of init_particles.glsl and simulate.glsl, in the kernels' float32 order."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...seam.records import COLLIDER, FORCE_FIELD, PARTICLE, TRIANGLE
from ...seam.tables import COLLIDER_TYPES, EMITTER_SHAPES, FIELD_TYPES, SIMULATE_FLAGS
from ...seam.tables import RANDOM_STREAMS as STREAM
from ...simulate.effectors import (
    COLLIDER_ROWS,
    MAX_COLLIDERS,
    SDF_EDGE_VOXELS,
    SDF_FILTER_VOXELS,
    SDF_REACH_ROWS,
    SDF_TRACE_STEPS,
    pack_force_fields,
    pack_triangles,
)
from ...simulate.simulation import SIMULATE, birth_interval, simulate_constants, state_origin
from ...simulate.turbulence import curl_noise
from ..seam.random import random_direction, random_unit

F = np.float32
U = np.uint32
HALF_MAX = F(65504.0)


@dataclass
class Inputs:
    """What the kernel reads besides the state: triangles, force fields, colliders, noise volume."""

    triangles: np.ndarray  # (rows * TRIANGLE_ROW, 4), as pack_triangles lays them out
    fields: np.ndarray  # (n, 3, 4)
    noise: np.ndarray  # (n, n, n, 4) [z, y, x]
    compact: bool = False
    field_count: int = 0
    collider_count: int = 0
    half_rounding: str = "NEAREST"  # or "ZERO": OpenGL lets float-to-half conversion do either
    sdf_atlas: np.ndarray = field(default_factory=lambda: np.zeros((1, 1, 1), F))  # [z, y, x], sdf.SdfAtlas
    sdf_weight_steps: int | None = None  # the texture unit's filter weights (sdf_distance): None exact, 256 NVIDIA's


def inputs_for(settings, mesh=None, fields=(), colliders=(), half_rounding="NEAREST", sdf_atlas=None) -> Inputs:
    triangles, _ = pack_triangles(mesh if settings.emitter_shape == "MESH" else None)
    inputs = Inputs(triangles.reshape(-1, 4), pack_force_fields(list(fields)),
                    curl_noise(settings.turbulence_resolution, settings.seed), settings.state_layout == "COMPACT",
                    len(fields), len(colliders), half_rounding)
    if sdf_atlas is not None:
        inputs.sdf_atlas = np.asarray(sdf_atlas, F)
    return inputs


# -- init_particles.glsl

def init_particles(settings, half_rounding="NEAREST") -> tuple[np.ndarray, np.ndarray]:
    count = settings.count
    pos_age, vel_life = np.zeros((count, 4), F), np.zeros((count, 4), F)
    PARTICLE.read_images(pos_age, vel_life)["age"][:] = -F(birth_interval(settings)) * np.arange(count, dtype=F)
    return store(pos_age, settings.state_layout == "COMPACT", half_rounding), vel_life


def store(values: np.ndarray, compact: bool, half_rounding: str = "NEAREST") -> np.ndarray:
    """What an image store keeps: float32, or half floats (rounded to nearest or toward zero)."""
    values = values.astype(F)
    if not compact:
        return values
    half = values.astype(np.float16)
    if half_rounding == "ZERO":
        too_far = np.abs(half.astype(F)) > np.abs(values)
        half = np.where(too_far, np.nextafter(half, np.float16(0)), half)
    return half.astype(F)


# -- simulate.glsl

def _transform(matrix, points):
    m = np.asarray(matrix, dtype=F)
    return (points @ m[:3, :3].T + m[:3, 3]).astype(F)


def _normalize(v):
    length = np.linalg.norm(v, axis=-1, keepdims=True).astype(F)
    return np.where(length > 0, v / np.where(length > 0, length, F(1)), F(0)).astype(F)


def random_in_cone(axis, cos_max, u, v):
    cos_theta = F(1.0) - u * (F(1.0) - F(cos_max))
    sin_theta = np.sqrt(np.maximum(F(0.0), F(1.0) - cos_theta * cos_theta))
    helper = np.where((np.abs(axis[:, 2]) < F(0.9))[:, None], F([0, 0, 1]), F([1, 0, 0]))
    tangent = _normalize(np.cross(helper, axis).astype(F))
    bitangent = np.cross(axis, tangent).astype(F)
    phi = F(6.28318530718) * v
    return (axis * cos_theta[:, None] + (tangent * np.cos(phi)[:, None] + bitangent * np.sin(phi)[:, None])
            * sin_theta[:, None]).astype(F)


def find_triangles(cumulative, u, count):
    """Binary search of find_triangle(): first triangle with cumulative fraction > u."""
    low = np.zeros(len(u), np.int64)
    high = np.full(len(u), count - 1, np.int64)
    while np.any(low < high):
        active = low < high
        middle = (low + high) // 2
        go_left = cumulative[middle] > u
        high = np.where(active & go_left, middle, high)
        low = np.where(active & ~go_left, middle + 1, low)
    return low


def box_point(draw, extent, normal) -> tuple[np.ndarray, np.ndarray]:
    """A point of the box emitter (``extent``: half sizes) and its normal, out from the center (``normal`` where
    the point is the center): emit()'s box, and spawn_events.glsl's around an event."""
    u = np.stack([draw("SHAPE_U"), draw("SHAPE_V"), draw("SHAPE_W")], axis=1)
    local = ((u * F(2.0) - F(1.0)) * extent).astype(F)
    return local, np.where((np.linalg.norm(local, axis=1) > 0)[:, None], _normalize(local), normal)


def _emit(index, lived, c, inputs, trace=None):
    """emit() of simulate.glsl; ``c``: the constants by name (``SIMULATE.named``).

    ``trace``: a dict that receives the directions and points the velocity is made of (gpu_rounding.py)."""
    i = index.astype(U)
    step, seed_streams = c["step_index"], c["seed"] * STREAM["PER_SEED"]

    def draw(stream):
        return random_unit(i, step, seed_streams + STREAM[stream])

    n = len(i)
    shape = c["emitter_shape"]
    extent = np.asarray(c["emitter_extent"], F)
    normal = random_direction(draw("NORMAL_U"), draw("NORMAL_V"))
    local = np.zeros((n, 3), F)
    if shape == EMITTER_SHAPES["SPHERE"]:
        local = normal * (extent[None, :] * np.power(draw("SHAPE_U"), F(1.0) / F(3.0))[:, None])
    elif shape == EMITTER_SHAPES["BOX"]:
        local, normal = box_point(draw, extent, normal)
    elif shape == EMITTER_SHAPES["MESH"]:
        tri = TRIANGLE.read(inputs.triangles.reshape(-1, TRIANGLE.texels, 4))
        t = find_triangles(tri["cumulative_area"], draw("SHAPE_U"), int(c["triangle_count"]))
        r = np.sqrt(draw("SHAPE_V"))
        s = draw("SHAPE_W")
        local = (tri["v0"][t] * (F(1.0) - r)[:, None] + tri["v1"][t] * (r * (F(1.0) - s))[:, None]
                 + tri["v2"][t] * (r * s)[:, None]).astype(F)
        normal = tri["normal"][t]
    start = _transform(c["emitter_prev"], local)
    end = _transform(c["emitter_cur"], local)
    dt = F(c["dt"])
    birth_fraction = F(1.0) - lived / dt
    position = start + (end - start) * birth_fraction[:, None]

    rotation = np.asarray(c["emitter_cur"], dtype=F)[:3, :3]
    base = np.tile(rotation @ np.asarray(c["initial_velocity"], dtype=F), (n, 1)).astype(F)
    speed = np.linalg.norm(base, axis=1).astype(F)
    cos_max = F(c["cone_cos"])
    cone = cos_max < 1.0 and speed[0] > 0
    if cone:
        axis = (base / speed[:, None]).astype(F)
        base = speed[:, None] * random_in_cone(axis, cos_max, draw("CONE_U"), draw("CONE_V"))
    world_normal = _normalize((normal @ rotation.T).astype(F))
    jitter = random_direction(draw("JITTER_U"), draw("JITTER_V"))
    random_speed = F(c["velocity_random"]) * draw("JITTER_SPEED")
    velocity = (base + world_normal * F(c["normal_speed"]) + jitter * random_speed[:, None]
                + (end - start) * (F(c["inherit_velocity"]) / dt))
    life = F(c["lifetime"]) * (F(1.0) - F(c["lifetime_random"]) * draw("LIFETIME"))
    if trace is not None:
        trace.update(local=local, start=start, end=end, normal=normal, jitter=jitter, random_speed=random_speed,
                     base=base, cone_u=draw("CONE_U") if cone else None)
    return position.astype(F), velocity.astype(F), life.astype(F)


def sample_noise(noise, u):
    """sample_noise() of simulate.glsl: trilinear with wrap, voxel centers at (i + 0.5) / n."""
    n = noise.shape[0]
    x = (u * F(n) - F(0.5)).astype(F)
    cell = np.floor(x)
    w = x - cell
    i0 = np.mod(cell, F(n)).astype(np.int64)
    i1 = np.mod(cell + F(1.0), F(n)).astype(np.int64)

    def at(ix, iy, iz):
        return noise[iz, iy, ix, :3]

    c00 = at(i0[:, 0], i0[:, 1], i0[:, 2]) + (at(i1[:, 0], i0[:, 1], i0[:, 2]) - at(i0[:, 0], i0[:, 1], i0[:, 2])) * w[:, :1]
    c10 = at(i0[:, 0], i1[:, 1], i0[:, 2]) + (at(i1[:, 0], i1[:, 1], i0[:, 2]) - at(i0[:, 0], i1[:, 1], i0[:, 2])) * w[:, :1]
    c01 = at(i0[:, 0], i0[:, 1], i1[:, 2]) + (at(i1[:, 0], i0[:, 1], i1[:, 2]) - at(i0[:, 0], i0[:, 1], i1[:, 2])) * w[:, :1]
    c11 = at(i0[:, 0], i1[:, 1], i1[:, 2]) + (at(i1[:, 0], i1[:, 1], i1[:, 2]) - at(i0[:, 0], i1[:, 1], i1[:, 2])) * w[:, :1]
    c0 = c00 + (c10 - c00) * w[:, 1:2]
    c1 = c01 + (c11 - c01) * w[:, 1:2]
    return (c0 + (c1 - c0) * w[:, 2:3]).astype(F)


def force_fields(position, inputs):
    total = np.zeros_like(position)
    for row in inputs.fields[: inputs.field_count, :, :]:
        field = FORCE_FIELD.read(row)
        axis, kind = field["axis"], field["kind"]
        offset = (position - field["position"]).astype(F)
        dist = np.linalg.norm(offset, axis=1).astype(F)
        inside = ~((field["max_distance"] > 0) & (dist > field["max_distance"]))
        strength = (field["strength"] * np.power(np.maximum(dist, F(1.0)), -field["falloff_power"])).astype(F)
        safe = np.where(dist > 0, dist, F(1))
        if kind == FIELD_TYPES["WIND"]:
            force = axis[None, :] * strength[:, None]
        elif kind == FIELD_TYPES["FORCE"]:
            force = np.where((dist > 0)[:, None], offset * (strength / safe)[:, None], F(0))
        elif kind == FIELD_TYPES["VORTEX"]:
            around = np.cross(axis, offset).astype(F)
            radius = np.linalg.norm(around, axis=1).astype(F)
            force = np.where((radius > 0)[:, None], around * (strength / np.where(radius > 0, radius, F(1)))[:, None], F(0))
        elif kind == FIELD_TYPES["TURBULENCE"]:
            force = sample_noise(inputs.noise, (offset / field["size"]).astype(F)) * strength[:, None]
        else:
            continue
        total += np.where(inside[:, None], force, F(0)).astype(F)
    return total


def _dot_rows(rows, points):
    """(dot(rows[0], (p, 1)), dot(rows[1], ...), ...) per point, as the kernel's dot() of uniform rows."""
    return (points @ rows[:, :3].T + rows[:, 3]).astype(F)


def sdf_voxel(collider, p):
    """sdf_voxel() of sdf_sample.glsl: (voxel-centre coordinates kept SDF_EDGE_VOXELS inside the grid, distance
    outside the grid's box) of shape-space points ``p``."""
    low, high, size = collider["sdf_low"], collider["sdf_high"], collider["sdf_size"]
    q = np.clip(p, low, high).astype(F)
    g = ((q - low) * collider["sdf_inverse_voxel"] - F(0.5)).astype(F)
    edge = F(SDF_EDGE_VOXELS)
    return np.clip(g, edge, size - (F(1) + edge)).astype(F), np.linalg.norm(p - q, axis=1).astype(F)


def sdf_sample(collider, atlas, p, weight_steps=None):
    """sdf_sample() of sdf_sample.glsl: (distance, gradient) at shape-space points ``p``, the trilinear between
    voxel centres; ``weight_steps``: its weights cut to multiples of 1 / weight_steps (sdf_distance)."""
    g, outside = sdf_voxel(collider, p)
    cell = np.floor(g)
    w = (g - cell).astype(F)
    if weight_steps is not None:
        w = (np.floor(w * F(weight_steps)) / F(weight_steps)).astype(F)
    i0 = cell.astype(np.int64) + np.array([0, 0, int(collider["sdf_z_offset"])])
    i1 = i0 + 1

    def at(x, y, z):
        return atlas[z[:, 2], y[:, 1], x[:, 0]]

    c000, c100, c010, c110 = at(i0, i0, i0), at(i1, i0, i0), at(i0, i1, i0), at(i1, i1, i0)
    c001, c101, c011, c111 = at(i0, i0, i1), at(i1, i0, i1), at(i0, i1, i1), at(i1, i1, i1)
    wx, wy, wz = w[:, 0], w[:, 1], w[:, 2]
    x00, x10, x01, x11 = c100 - c000, c110 - c010, c101 - c001, c111 - c011
    c00, c10, c01, c11 = c000 + x00 * wx, c010 + x10 * wx, c001 + x01 * wx, c011 + x11 * wx
    x0, x1 = x00 + (x10 - x00) * wy, x01 + (x11 - x01) * wy
    y0, y1 = c10 - c00, c11 - c01
    c0, c1 = c00 + y0 * wy, c01 + y1 * wy
    gradient = (np.stack([x0 + (x1 - x0) * wz, y0 + (y1 - y0) * wz, c1 - c0], axis=1)
                * collider["sdf_inverse_voxel"]).astype(F)
    inside = c0 + (c1 - c0) * wz
    return np.where(outside > 0, np.maximum(outside, inside - outside), inside).astype(F), gradient


def sdf_distance(collider, atlas, p, weight_steps=None):
    """sdf_distance() of sdf_sample.glsl, the texture unit's trilinear filter: with exact weights (llvmpipe's
    float filter, up to its rounding); ``weight_steps`` 256: weights cut to 1/256, NVIDIA's 8-bit fractions at
    their worst, for the tolerances the tests allow (effectors.SDF_FILTER_VOXELS)."""
    return sdf_sample(collider, atlas, p, weight_steps)[0]


def sdf_normal(gradient):
    size = np.linalg.norm(gradient, axis=1).astype(F)
    return np.where((size > F(1e-4))[:, None], gradient / np.where(size > F(1e-4), size, F(1))[:, None],
                    F([0, 0, 1])).astype(F)


def trace(distance, step, start, direction, span, level, d, touched, traced):
    """sdf_trace() of simulate.glsl for the ``traced`` rows: how far each got; ``d`` (the distances at
    ``start`` in, the last samples out) and ``touched`` are updated in place."""
    along = np.zeros(len(start), F)
    for _ in range(SDF_TRACE_STEPS):
        active = np.flatnonzero(traced & (along < span) & ~touched)
        if not len(active):
            break
        along[active] = np.minimum(along[active] + np.maximum(d[active] - level[active], step), span[active])
        d[active] = distance(start[active] + direction[active] * along[active, None])
        touched[active] = d[active] < level[active]
    touched |= traced & (along < span)
    return along


def sdf_contact(collider, atlas, start, end, weight_steps=None):
    """sdf_contact() of simulate.glsl, for arrays of segments: (touched, p, normal, began_inside);
    ``weight_steps``: sdf_distance's."""
    contact, step, slack = collider["thickness"], collider["sdf_step"], collider["sdf_slack"]

    def distance(points):
        return sdf_distance(collider, atlas, points, weight_steps)

    d = distance(start)
    began_inside = d < 0
    n = len(start)
    touched = np.zeros(n, bool)
    p, normal = end.copy(), np.zeros((n, 3), F)
    delta = (end - start).astype(F)
    span = np.linalg.norm(delta, axis=1).astype(F)
    outside = d >= 0
    traced = outside & (span > 0)
    direction = (delta / np.where(span > 0, span, F(1))[:, None]).astype(F)
    along = trace(distance, step, start, direction, span, np.minimum(contact, d - slack).astype(F), d, touched, traced)
    rows = np.flatnonzero(touched)
    hit = start[rows] + direction[rows] * along[rows, None]
    normal[rows] = sdf_normal(sdf_sample(collider, atlas, hit)[1])
    rest = end[rows] - hit
    into = np.minimum(np.sum(rest * normal[rows], axis=1), F(0)).astype(F)
    p[rows] = hit + (rest - normal[rows] * into[:, None])
    slide = np.linalg.norm(p[rows] - hit, axis=1).astype(F)
    if collider["sdf_surface"] > 0:  # the slide over an open surface's thin slab is traced too
        sliding = slide > 0
        at = rows[sliding]
        along_slide = ((p[at] - hit[sliding]) / slide[sliding, None]).astype(F)
        again = np.zeros(len(at), bool)
        slid = trace(distance, step, hit[sliding], along_slide, slide[sliding],
                     np.minimum(contact, d[at] - slack).astype(F), d[at], again, np.ones(len(at), bool))
        p[at[again]] = hit[sliding][again] + along_slide[again] * slid[again, None]
    # the others' filtered d is the end's: it decides only whether the end needs the exact sample
    again = np.flatnonzero(touched | ~outside | ((d - contact) * collider["sdf_inverse_voxel"] < F(SDF_FILTER_VOXELS)))
    exact, gradient = sdf_sample(collider, atlas, p[again])
    push = again[exact < contact]
    normal[push] = sdf_normal(gradient[exact < contact])
    p[push] += normal[push] * (contact - exact[exact < contact])[:, None]
    touched[push] = True
    return touched, p, normal, began_inside


def step_start_local(collider, previous, lived):
    """step_start_local() of simulate.glsl: where ``previous`` was relative to the collider as the step began."""
    local = _dot_rows(collider["to_local"], previous)
    moved = previous + _dot_rows(collider["surface_velocity"], local) * lived[:, None]
    return _dot_rows(collider["to_local"], moved.astype(F))


def meets_sdf_reach(previous, position, reach, spread):
    """meets_sdf_reach() of simulate.glsl: whether each step may meet an SDF collider's grid (the broad phase),
    from that collider's two rows of effectors.sdf_reach and the spread matrix."""
    middle = (F(0.5) * (previous + position)).astype(F)
    extent = (np.abs(F(0.5) * (position - previous)) @ np.asarray(spread, F)[:3, :3].T).astype(F)
    return np.all(middle - extent <= reach[1, :3], axis=1) & np.all(middle + extent >= reach[0, :3], axis=1)


def started_inside(collider, start):
    """started_inside() of simulate.glsl (analytic kinds; an SDF's comes from sdf_contact)."""
    kind = collider["kind"]
    if kind == COLLIDER_TYPES["SPHERE"]:
        return np.linalg.norm(start, axis=1).astype(F) < collider["half_size"][0]
    if kind == COLLIDER_TYPES["BOX"]:
        return np.all(np.abs(start) < collider["half_size"], axis=1)
    return np.zeros(len(start), bool)


def collide(previous, position, velocity, lived, c, inputs, hits=None, impact=None):
    """collide() of simulate.glsl: (position, velocity, killed); ``hits``: a list that receives, per collider
    that something hit, its rows, which particles it pushed and reflected, their state and local point before
    it and their pushed local point (gpu_rounding.py); ``impact``: an array that receives each particle's fastest
    speed into a collider it did not die on (the EVENTS variant's)."""
    position, velocity = position.copy(), velocity.copy()
    killed = np.zeros(len(position), bool)
    index = np.arange(len(position), dtype=U)
    for number, row in enumerate(np.asarray(c["colliders"], F).reshape(-1, COLLIDER_ROWS, 4)[: inputs.collider_count]):
        collider = COLLIDER.read(row)
        kind, half = collider["kind"], collider["half_size"]
        reach = (half + collider["thickness"]).astype(F)
        to_local, to_world = collider["to_local"], collider["to_world"]
        p = _dot_rows(to_local, position)
        before_push = None if hits is None else p.copy()
        normal = np.zeros_like(p)
        sdf_began_inside = np.zeros(len(p), bool)
        if kind == COLLIDER_TYPES["PLANE"]:
            before = _dot_rows(collider["start_z"][None], previous)[:, 0]
            hit = ((p[:, 2] < collider["thickness"]) & (before >= 0) & (np.abs(p[:, 0]) <= half[0])
                   & (np.abs(p[:, 1]) <= half[1]))
            p[hit, 2] = collider["thickness"]
            normal[hit] = (0, 0, 1)
        elif kind == COLLIDER_TYPES["SPHERE"]:
            dist = np.linalg.norm(p, axis=1).astype(F)
            hit = dist < reach[0]
            direction = np.where((dist > 0)[:, None], p / np.where(dist > 0, dist, F(1))[:, None], F([0, 0, 1]))
            normal[hit] = direction[hit]
            p[hit] = (direction * reach[0])[hit]
        elif kind == COLLIDER_TYPES["BOX"]:
            depth = reach - np.abs(p)
            hit = np.all(depth > 0, axis=1)
            axis = np.where((depth[:, 0] <= depth[:, 1]) & (depth[:, 0] <= depth[:, 2]), 0,
                            np.where(depth[:, 1] <= depth[:, 2], 1, 2))
            rows = np.flatnonzero(hit)
            side = np.where(p[rows, axis[rows]] < 0, F(-1), F(1))
            p[rows, axis[rows]] = side * reach[axis[rows]]
            normal[rows, axis[rows]] = side
        elif kind == COLLIDER_TYPES["SDF"]:
            start = step_start_local(collider, previous, lived)
            margin = collider["thickness"]
            sdf_box = np.asarray(c["sdf_reach"], F).reshape(-1, SDF_REACH_ROWS, 4)[number]
            broad = meets_sdf_reach(previous, position, sdf_box, c["sdf_reach_spread"])
            near = np.flatnonzero(broad
                                  & np.all(np.minimum(start, p) - margin <= collider["sdf_high"], axis=1)
                                  & np.all(np.maximum(start, p) + margin >= collider["sdf_low"], axis=1))
            touched, p[near], normal[near], sdf_began_inside[near] = sdf_contact(
                collider, inputs.sdf_atlas, start[near], p[near], inputs.sdf_weight_steps)
            normal[near[~touched]] = 0
        hit = np.any(normal != 0, axis=1)
        if collider["permeability"] > 0 and hit.any():
            stream = c["seed"] * STREAM["PER_SEED"] + STREAM["PERMEABILITY"]
            passes = random_unit(index * U(MAX_COLLIDERS) + U(number), c["step_index"], stream) < collider["permeability"]
            began_inside = (sdf_began_inside if kind == COLLIDER_TYPES["SDF"]
                            else started_inside(collider, step_start_local(collider, previous, lived)))
            hit &= ~(passes | began_inside)
        hit &= ~killed  # a killed particle left the loop
        if not hit.any():
            continue
        record = None if hits is None else {"row": row, "hit": hit, "position": position.copy(),
                                            "velocity": velocity.copy(), "local": before_push, "pushed": p,
                                            "normal": normal}
        pushed = _dot_rows(to_world, p)
        position[hit] = pushed[hit]
        if collider["kill"] > 0:
            killed |= hit
            if record is not None:
                hits.append({**record, "reflect": np.zeros_like(hit)})
            continue
        surface_velocity = _dot_rows(collider["surface_velocity"], p)
        v = ((velocity - surface_velocity) @ to_local[:, :3].T).astype(F)
        into = np.sum(v * normal, axis=1).astype(F)
        if impact is not None:
            impact[hit] = np.maximum(impact[hit], -into[hit])
        stickiness = collider["stickiness"]
        bounced = np.minimum(into + stickiness, F(0)) if stickiness > 0 else into
        tangential = v - normal * into[:, None]
        v = np.where((into < 0)[:, None],
                     tangential * (F(1) - collider["friction"]) - normal * (bounced * collider["bounce"])[:, None], v)
        reflect = hit & (into < 0)
        if stickiness > 0:
            v = v - normal * stickiness
            reflect = hit
        if record is not None:
            hits.append({**record, "reflect": reflect})
        velocity[reflect] = ((v @ to_world[:, :3].T).astype(F) + surface_velocity)[reflect]
    return position, velocity, killed


def acceleration_at(position, c, inputs: Inputs):
    """Gravity, turbulence and force fields at ``position`` (world); ``c``: the constants by name."""
    acceleration = np.tile(np.asarray(c["gravity"], dtype=F), (len(position), 1))
    if c["turbulence_strength"] != 0:
        u = (position * F(c["turbulence_frequency"]) - np.asarray(c["noise_offset"], F)).astype(F)
        acceleration += sample_noise(inputs.noise, u) * F(c["turbulence_strength"])
    if inputs.field_count:
        acceleration += force_fields(position, inputs)
    return acceleration


def die(dying, lived_for, over, age, life, c):
    """die() of simulate.glsl for the particles ``dying`` (died ``over`` seconds before the step's end,
    ``lived_for`` seconds after their birth): their new (age, life)."""
    if not c["flags"] & SIMULATE_FLAGS["RESPAWN"]:
        return age, np.where(dying, F(-1), life).astype(F)
    skip, interval = F(c["respawn_skip"]), F(c["burst_interval"])
    wait = (skip + np.maximum(F(c["slot_period"]) - lived_for, F(0))).astype(F)
    if interval > 0:
        death = F(c["time"]) - over
        wait = (np.ceil(death / interval) * interval - death).astype(F)
    return np.where(dying, over - wait, age).astype(F), np.where(dying, F(0), life).astype(F)


def simulate(pos_age, vel_life, c, inputs: Inputs, trace: dict | None = None, events: dict | None = None,
             spawned: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """One ``simulate.glsl`` step with the constants ``simulate_constants`` builds.

    ``trace``: a dict that receives the step's float32 values before they are stored (gpu_rounding.py);
    ``events``: a dict that receives the EVENTS variant's event_position and event_velocity; ``spawned``: the
    SPAWNED variant (births keep the state spawn_events wrote and draw only their lifetime)."""
    c = SIMULATE.named(c)
    dt = F(c["dt"])
    origin_in = np.asarray(c["loaded_origin"], F)
    origin_out = np.asarray(c["stored_origin"], F)
    particle = PARTICLE.read_images(pos_age, vel_life)
    position = (particle["position"] + origin_in).astype(F)
    velocity = particle["velocity"].copy()
    age = particle["age"] + dt
    life = particle["life"].copy()

    dying = (life > 0) & (age >= life)
    died_over = np.where(dying, age - life, F(-1)).astype(F)
    death_position, death_velocity = position.copy(), velocity.copy()
    age, life = die(dying, life, age - life, age, life, c)
    active = (age >= 0) & (life >= 0)

    lived = np.full(len(age), dt, F)
    spawn = active & (life == 0)
    lived[spawn] = np.minimum(age, dt)[spawn]
    index = np.flatnonzero(spawn)
    emission = {}
    loaded = position.copy() if trace is not None else None
    if len(index) and spawned:
        draw = random_unit(index.astype(U), c["step_index"], c["seed"] * STREAM["PER_SEED"] + STREAM["LIFETIME"])
        life[index] = F(c["lifetime"]) * (F(1.0) - F(c["lifetime_random"]) * draw)
        age[index] = lived[index]
    elif len(index):
        p, v, new_life = _emit(index, lived[index], c, inputs, emission if trace is not None else None)
        position[index], velocity[index], life[index] = p, v, new_life
        age[index] = lived[index]

    acceleration = acceleration_at(position, c, inputs)
    h = lived[:, None]
    previous = position
    moved = position + velocity * h
    damping = np.minimum(F(c["drag"]) * lived, F(1.0))[:, None]
    new_velocity = velocity + (acceleration * h - velocity * damping)  # the kernel's +=: the right side first
    hits = []
    if trace is not None:
        trace.update(c=c, lived=lived, active=active, born=index, emission=emission, loaded=loaded,
                     position=position, velocity=velocity, acceleration=acceleration, damping=damping[:, 0],
                     moved=moved, integrated=new_velocity, hits=hits)
    impact = np.zeros(len(age), F)
    if inputs.collider_count:
        moved, new_velocity, killed = collide(previous, moved, new_velocity, lived, c, inputs, hits, impact)
        age, life = die(active & killed, age, np.zeros_like(age), age, life, c)
        killed &= active
        died_over[killed], death_position[killed], death_velocity[killed] = 0, moved[killed], new_velocity[killed]
    position = np.where(active[:, None], moved, position)
    velocity = np.where(active[:, None], new_velocity, velocity)
    if events is not None:
        dead = (died_over >= 0)[:, None]
        events["event_position"] = np.concatenate([np.where(dead, death_position, position), died_over[:, None]], 1)
        events["event_velocity"] = np.concatenate([np.where(dead, death_velocity, velocity),
                                                   np.where(dead[:, 0], F(0), np.where(active, impact, F(0)))[:, None]],
                                                  1).astype(F)
    limit = HALF_MAX if inputs.compact else F(3.0e38)
    stored_position = np.clip(position - origin_out, -limit, limit)
    velocity = np.where(active[:, None], np.clip(velocity, -limit, limit), velocity)
    out_pos, out_vel = PARTICLE.pack_images({"position": stored_position, "age": age, "velocity": velocity,
                                             "life": life})
    if trace is not None:
        trace.update(stored_position=stored_position, stored_velocity=velocity)
    return store(out_pos, inputs.compact, inputs.half_rounding), store(out_vel, inputs.compact, inputs.half_rounding)


@dataclass
class Clock:
    """The host's side of ``ParticleSystem``: simulate steps taken, seconds simulated, the state origin."""

    step_index: int = 0
    time: float = 0.0
    origin: np.ndarray = field(default_factory=lambda: np.zeros(3, F))


def step_frame(pos_age, vel_life, settings, inputs: Inputs, clock: Clock, dt: float, emitter_prev, emitter_cur,
               triangle_count: int = 0, colliders=(), traces: list | None = None):
    """Reference of ``ParticleSystem.step``: one frame in ``substeps`` simulate steps, state as stored.

    ``traces``: a list that receives each simulate step's trace (``simulate``)."""
    s = settings.substeps
    prev, cur = np.asarray(emitter_prev, np.float64), np.asarray(emitter_cur, np.float64)
    for k in range(s):
        start = prev + (cur - prev) * (k / s)
        end = prev + (cur - prev) * ((k + 1) / s)
        new_origin = state_origin(settings, end)
        clock.time += dt / s
        c = simulate_constants(settings, dt=dt / s, step_index=clock.step_index, time=clock.time,
                               emitter_prev=start, emitter_cur=end, origin_in=clock.origin, origin_out=new_origin,
                               triangle_count=triangle_count, field_count=inputs.field_count,
                               colliders=list(colliders), substep=(k, s))
        trace = None if traces is None else {}
        pos_age, vel_life = simulate(pos_age, vel_life, c, inputs, trace)
        if traces is not None:
            traces.append(trace)
        clock.origin = new_origin
        clock.step_index += 1
    return pos_age, vel_life


def run_steps(settings, frames: int, dt: float, emitter_prev, emitter_cur, mesh=None, fields=(), colliders=(),
              half_rounding="NEAREST", sdf_atlas=None):
    """Reference of ``ParticleSystem.reset`` + ``step`` (substeps included); positions in world space."""
    inputs = inputs_for(settings, mesh, fields, colliders, half_rounding, sdf_atlas)
    pos_age, vel_life = init_particles(settings, half_rounding)
    triangle_count = mesh.count if (mesh is not None and settings.emitter_shape == "MESH") else 0
    clock = Clock()
    for _ in range(frames):
        pos_age, vel_life = step_frame(pos_age, vel_life, settings, inputs, clock, dt, emitter_prev, emitter_cur,
                                       triangle_count, colliders)
    pos_age = pos_age.copy()
    PARTICLE.read_images(pos_age, vel_life)["position"][:] += clock.origin
    return pos_age, vel_life
