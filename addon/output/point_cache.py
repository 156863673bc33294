"""Point caches: each baked frame's live particles as a binary PLY file that Blender plays without the add-on.

Why PLY (measured with 1M particles, bench/export.py and docs/features.md):
one header and one buffer of fixed-size records, written at the speed of a
memory copy; Geometry Nodes' own *Import PLY* node reads it (0.2 s for 1M
points on a laptop core), with every property as a point attribute, so a node
tree saved in the .blend plays the sequence in any Blender, add-on or not
(point_cache_nodes.py); CloudCompare, MeshLab, Houdini and Open3D read it too.
CSV, the other format a node imports, was 20x slower to write and larger;
Blender's own bake format is internal and versioned with Blender.

One vertex per live particle, little-endian float32 properties:
``x y z`` position (world), ``vx vy vz`` velocity (units a second), ``radius``,
``color_r color_g color_b`` (linear, HDR: color times emission strength),
``age`` (seconds), ``rx ry rz`` rotation (axis times angle, radians),
``id_high id_low`` (whole numbers below 65536: the particle's id is ``id_high * 65536 + id_low``,
its slot plus the slots of the effects before it: Blender reads every PLY
property as float32, which holds integers exactly only up to 2^24).
No particle alive: a valid file of zero vertices.

Each frame's body is built on the GPU (engine/look/point_records.py says why): ``capture`` packs every system's
live particles' records and reads them back, ``write`` puts the header before them.  ``ply_records`` makes the
same records with numpy from the state (the reference the tests hold the GPU's bytes to).
"""

from __future__ import annotations

import weakref
from pathlib import Path

import numpy as np

from ..engine.look.point_records import Body, PointRecords

PLY_NAMES = ("x", "y", "z", "vx", "vy", "vz", "radius", "color_r", "color_g", "color_b", "age", "rx", "ry", "rz",
             "id_high", "id_low")
PLY_DTYPE = np.dtype([(name, "<f4") for name in PLY_NAMES])  # one float32 row: filled in blocks (ply_records)
_RECORDS_OF = weakref.WeakKeyDictionary()  # system -> its PointRecords (its GPU images, reused frame after frame)
_COLUMNS = {"position": slice(0, 3), "velocity": slice(3, 6), "radius": 6, "color": slice(7, 10), "age": 10,
            "rotation": slice(11, 14)}


def ply_header(count: int) -> bytes:
    properties = "".join(f"property float {name}\n" for name in PLY_NAMES)
    return (f"ply\nformat binary_little_endian 1.0\ncomment GPU Particles point cache\n"
            f"element vertex {count}\n{properties}end_header\n").encode("ascii")


def ply_records(particles: dict[str, np.ndarray]) -> np.ndarray:
    """The PLY's vertex records of :func:`export.particle_attributes` (concatenated over systems)."""
    rows = np.empty((len(particles["id"]), len(PLY_NAMES)), np.float32)
    for attribute, columns in _COLUMNS.items():
        rows[:, columns] = particles[attribute][:, :3] if attribute == "color" else particles[attribute]
    rows[:, 14], rows[:, 15] = particles["id"] >> 16, particles["id"] & 0xFFFF  # each exact in a float32
    return rows.view(PLY_DTYPE)[:, 0]


def write_ply(path: Path, bodies: list) -> None:
    """One header, then the bodies one after the other (float32 records, PLY_DTYPE's or 16 lanes a row)."""
    with open(path, "wb") as file:
        file.write(ply_header(sum(body.nbytes for body in bodies) // PLY_DTYPE.itemsize))
        for body in bodies:
            file.write(memoryview(np.ascontiguousarray(body)).cast("B"))


def read_ply(path: Path) -> np.ndarray:
    """A point cache's records (what :func:`write_ply` wrote), for tests and tools."""
    data = Path(path).read_bytes()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    return np.frombuffer(data, PLY_DTYPE, offset=end)


def capture(renderer, frame: int) -> list[Body]:
    """The drawn frame's PLY body of every system, packed on the GPU and read back (the writer adds the header)."""
    first_id, packed = 0, []
    for system in renderer.simulation.systems:
        if system not in _RECORDS_OF:
            _RECORDS_OF[system] = PointRecords(renderer.host, system)
        _RECORDS_OF[system].pack(system, renderer.resources.look_texture(system), first_id)
        packed.append(_RECORDS_OF[system])
        first_id += system.count
    return [records.read() for records in packed]


def write(path: Path, bodies: list[Body]) -> None:
    try:
        write_ply(path, [body.records for body in bodies])
    finally:
        for body in bodies:
            body.give_back()
